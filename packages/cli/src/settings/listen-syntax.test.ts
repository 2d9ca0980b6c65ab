import { describe, expect, it } from '@jest/globals';
import { parseListenEntry, parseListenList } from './listen-syntax';

describe("Kong's listen strings", () => {
  it('reads the address and the flags', () => {
    expect(parseListenEntry('0.0.0.0:8000 http2 reuseport backlog=16384', 'X')).toEqual({
      host: '0.0.0.0',
      port: 8000,
      flags: { ssl: false, http2: true, udp: false, proxyProtocol: false, reuseport: true, backlog: 16384 },
    });
    expect(parseListenEntry('[::1]:9000 ssl proxy_protocol', 'X')).toMatchObject({ host: '::1', port: 9000, flags: { ssl: true, proxyProtocol: true } });
  });

  it('reads several comma-separated entries; off is none', () => {
    expect(parseListenList('127.0.0.1:5555, 127.0.0.1:5556 ssl, 127.0.0.1:5557 udp', 'S')!.map((s) => [s.port, s.flags.ssl, s.flags.udp])).toEqual([
      [5555, false, false],
      [5556, true, false],
      [5557, false, true],
    ]);
    expect(parseListenList('off', 'S')).toBeNull();
  });

  it('refuses an unknown flag and a missing port by name', () => {
    expect(() => parseListenEntry('127.0.0.1:80 fast', 'GATEHOUSE_STREAM_LISTEN')).toThrow("GATEHOUSE_STREAM_LISTEN: unknown flag 'fast'");
    expect(() => parseListenEntry('localhost', 'GATEHOUSE_PROXY_LISTEN')).toThrow(/host:port/);
  });
});
