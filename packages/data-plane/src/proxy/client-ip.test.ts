import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { parseTrustedIps, peerAddress, TrustedProxies } from './client-ip';

const request = (peer: string, forwardedFor?: string | string[], realIp?: string) =>
  ({
    socket: { remoteAddress: peer },
    headers: { ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }), ...(realIp === undefined ? {} : { 'x-real-ip': realIp }) },
  }) as unknown as IncomingMessage;

describe('client IP', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);

  it('is the socket address for an untrusted peer, whatever X-Forwarded-For says', () => {
    expect(proxies.clientIp(request('203.0.113.5', '1.2.3.4'))).toBe('203.0.113.5');
    expect(proxies.clientIp(request('::ffff:203.0.113.5', '1.2.3.4'))).toBe('203.0.113.5');
    expect(peerAddress(request('::ffff:127.0.0.1'))).toBe('127.0.0.1');
  });

  it('is the right-most untrusted X-Forwarded-For entry behind trusted proxies', () => {
    expect(proxies.clientIp(request('10.1.2.3', '1.2.3.4'))).toBe('1.2.3.4');
    // a client prepending a forged entry does not move its own, right-most address
    expect(proxies.clientIp(request('10.1.2.3', '6.6.6.6, 1.2.3.4'))).toBe('1.2.3.4');
    expect(proxies.clientIp(request('10.1.2.3', '6.6.6.6, 1.2.3.4, 192.168.1.7, 10.9.9.9'))).toBe('1.2.3.4');
    expect(proxies.clientIp(request('10.1.2.3', ['6.6.6.6', '1.2.3.4, 10.0.0.1']))).toBe('1.2.3.4');
    expect(proxies.clientIp(request('fd00::1', '2001:db8::7'))).toBe('2001:db8::7');
  });

  it('stops at an entry that is not an address, and takes the left-most of an all-trusted list', () => {
    expect(proxies.clientIp(request('10.1.2.3', 'garbage, 10.0.0.2'))).toBe('10.0.0.2');
    expect(proxies.clientIp(request('10.1.2.3', '10.0.0.9, 10.0.0.2'))).toBe('10.0.0.9');
    expect(proxies.clientIp(request('10.1.2.3'))).toBe('10.1.2.3');
  });

  it("behind a trusted proxy, X-Real-IP (Kong's default real_ip_header) gives the address when there is no X-Forwarded-For", () => {
    expect(proxies.clientIp(request('10.1.2.3', undefined, '::1'))).toBe('::1');
    expect(proxies.clientIp(request('10.1.2.3', undefined, ' 203.0.113.9 '))).toBe('203.0.113.9');
    expect(proxies.clientIp(request('10.1.2.3', undefined, '[fe80::1]'))).toBe('fe80::1');
    expect(proxies.clientIp(request('10.1.2.3', undefined, '::ffff:1.2.3.4'))).toBe('1.2.3.4');
    // not an address: the peer
    expect(proxies.clientIp(request('10.1.2.3', undefined, 'me'))).toBe('10.1.2.3');
    // X-Forwarded-For, when present, comes first
    expect(proxies.clientIp(request('10.1.2.3', '1.2.3.4', '::1'))).toBe('1.2.3.4');
    // an untrusted peer's X-Real-IP is never believed
    expect(proxies.clientIp(request('203.0.113.5', undefined, '::1'))).toBe('203.0.113.5');
  });

  it('refuses an invalid trusted entry', () => {
    expect(() => new TrustedProxies(['10.0.0.0/33'])).toThrow("invalid trusted IP or CIDR block '10.0.0.0/33'");
    expect(() => new TrustedProxies(['not-an-ip'])).toThrow('invalid trusted IP');
    expect(() => new TrustedProxies(['10.0.0.0/x'])).toThrow('invalid trusted IP');
  });

  it('reads a comma-separated list', () => {
    expect(parseTrustedIps(' 10.0.0.0/8, ::1 ,,')).toEqual(['10.0.0.0/8', '::1']);
    expect(parseTrustedIps(undefined)).toEqual([]);
  });

  it("follows Kong's real_ip_header and real_ip_recursive when set, as nginx's realip does", () => {
    const last = new TrustedProxies(['10.0.0.0/8'], { header: 'X-Forwarded-For', recursive: false });
    expect(last.clientIp(request('10.1.2.3', '1.2.3.4, 10.0.0.9'))).toBe('10.0.0.9');
    const walk = new TrustedProxies(['10.0.0.0/8'], { header: 'X-Forwarded-For', recursive: true });
    expect(walk.clientIp(request('10.1.2.3', '6.6.6.6, 1.2.3.4, 10.0.0.9'))).toBe('1.2.3.4');
    const real = new TrustedProxies(['10.0.0.0/8'], { header: 'X-Real-IP', recursive: false });
    // X-Forwarded-For no longer counts, only the named header
    expect(real.clientIp(request('10.1.2.3', '1.2.3.4', '5.6.7.8'))).toBe('5.6.7.8');
    expect(real.clientIp(request('10.1.2.3', '1.2.3.4'))).toBe('10.1.2.3');
    expect(real.clientIp(request('203.0.113.5', undefined, '5.6.7.8'))).toBe('203.0.113.5');
  });
});
