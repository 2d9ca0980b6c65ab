import { describe, expect, it } from '@jest/globals';
import { readProxyHeader } from './header';

const v2 = (command: number, family: number, block: Buffer) =>
  Buffer.concat([Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x20 | command, family]), Buffer.from([block.length >> 8, block.length & 0xff]), block]);
const ports = (src: number, dst: number) => Buffer.from([src >> 8, src & 0xff, dst >> 8, dst & 0xff]);

describe('PROXY protocol header', () => {
  it('reads a v1 TCP4 and TCP6 line and says how long it is', () => {
    const line = 'PROXY TCP4 203.0.113.7 10.0.0.1 51234 8000\r\n';
    expect(readProxyHeader(Buffer.from(`${line}GET / HTTP/1.1\r\n`))).toEqual({
      kind: 'header',
      length: line.length,
      addresses: { sourceAddress: '203.0.113.7', sourcePort: 51234, destinationAddress: '10.0.0.1', destinationPort: 8000 },
    });
    expect(readProxyHeader(Buffer.from('PROXY TCP6 2001:db8::7 ::1 1 65535\r\n'))).toMatchObject({ addresses: { sourceAddress: '2001:db8::7', sourcePort: 1, destinationAddress: '::1', destinationPort: 65535 } });
  });

  it('keeps the peer for v1 UNKNOWN', () => {
    expect(readProxyHeader(Buffer.from('PROXY UNKNOWN\r\n'))).toEqual({ kind: 'header', length: 15, addresses: null });
    expect(readProxyHeader(Buffer.from('PROXY UNKNOWN ffff::1 ::1 1 2\r\n'))).toMatchObject({ kind: 'header', addresses: null });
  });

  it('waits for more bytes while a header may still come', () => {
    expect(readProxyHeader(Buffer.from('PRO'))).toEqual({ kind: 'incomplete' });
    expect(readProxyHeader(Buffer.from('PROXY TCP4 1.2.3.4'))).toEqual({ kind: 'incomplete' });
    expect(readProxyHeader(Buffer.from([0x0d, 0x0a, 0x0d]))).toEqual({ kind: 'incomplete' });
    expect(readProxyHeader(v2(1, 0x11, Buffer.concat([Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]), ports(1, 2)])).subarray(0, 20))).toEqual({ kind: 'incomplete' });
  });

  it.each([
    ['no header', 'GET / HTTP/1.1\r\n'],
    ['a v1 address of the wrong family', 'PROXY TCP4 ::1 1.2.3.4 1 2\r\n'],
    ['a v1 address that is not one', 'PROXY TCP4 1.2.3 1.2.3.4 1 2\r\n'],
    ['a v1 port past 65535', 'PROXY TCP4 1.2.3.4 1.2.3.4 65536 2\r\n'],
    ['a v1 port with a leading zero', 'PROXY TCP4 1.2.3.4 1.2.3.4 01 2\r\n'],
    ['an unknown v1 protocol', 'PROXY UDP4 1.2.3.4 1.2.3.4 1 2\r\n'],
    ['extra v1 fields', 'PROXY TCP4 1.2.3.4 1.2.3.4 1 2 3\r\n'],
    ['a v1 line without its end in 107 bytes', `PROXY TCP4 ${'1'.repeat(110)}`],
  ])('refuses %s', (_what, text) => {
    expect(readProxyHeader(Buffer.from(text))).toMatchObject({ kind: 'invalid' });
  });

  it('reads v2 PROXY over IPv4 and IPv6, skipping TLVs', () => {
    const tlv = Buffer.from([0x04, 0x00, 0x01, 0x00]);
    const v4 = v2(1, 0x11, Buffer.concat([Buffer.from([198, 51, 100, 9, 10, 0, 0, 2]), ports(40000, 443), tlv]));
    expect(readProxyHeader(Buffer.concat([v4, Buffer.from('rest')]))).toEqual({
      kind: 'header',
      length: v4.length,
      addresses: { sourceAddress: '198.51.100.9', sourcePort: 40000, destinationAddress: '10.0.0.2', destinationPort: 443 },
    });
    const six = Buffer.alloc(32);
    six.writeUInt16BE(0x2001, 0);
    six.writeUInt16BE(0x0db8, 2);
    six[15] = 5;
    six[31] = 1;
    expect(readProxyHeader(v2(1, 0x21, Buffer.concat([six, ports(5, 6)])))).toMatchObject({ addresses: { sourceAddress: '2001:db8::5', sourcePort: 5, destinationAddress: '::1', destinationPort: 6 } });
  });

  it('keeps the peer for v2 LOCAL and the UNSPEC family', () => {
    expect(readProxyHeader(v2(0, 0x00, Buffer.alloc(0)))).toEqual({ kind: 'header', length: 16, addresses: null });
    expect(readProxyHeader(v2(1, 0x00, Buffer.alloc(0)))).toEqual({ kind: 'header', length: 16, addresses: null });
  });

  it('refuses a v2 header with a bad version, command, length or transport', () => {
    const block = Buffer.concat([Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]), ports(1, 2)]);
    const badVersion = v2(1, 0x11, block);
    badVersion[12] = 0x11;
    expect(readProxyHeader(badVersion)).toMatchObject({ kind: 'invalid' });
    expect(readProxyHeader(v2(2, 0x11, block))).toMatchObject({ kind: 'invalid' });
    expect(readProxyHeader(v2(1, 0x11, block.subarray(0, 8)))).toMatchObject({ kind: 'invalid' });
    expect(readProxyHeader(v2(1, 0x13, block))).toMatchObject({ kind: 'invalid' });
    expect(readProxyHeader(v2(1, 0x11, Buffer.alloc(5000)))).toMatchObject({ kind: 'invalid' });
  });
});
