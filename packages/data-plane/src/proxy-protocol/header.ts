import { isIP } from 'node:net';
import { IPv4ProxyAddress, IPv6ProxyAddress, V1ProxyProtocol, V2ProxyProtocol } from 'proxy-protocol-js';

/** The connection the PROXY header describes: the client and the address it connected to. */
export interface ProxiedAddresses {
  sourceAddress: string;
  sourcePort: number;
  destinationAddress: string;
  destinationPort: number;
}

/**
 * What the first bytes of a connection hold: not yet enough to tell, not a PROXY header, or a header of `length`
 * bytes; `addresses` is null for the headers that name no client (v1 `UNKNOWN`, v2 `LOCAL`, v2 UNSPEC and UNIX
 * families), whose connection is kept with its peer address, as nginx does.
 */
export type HeaderRead = { kind: 'incomplete' } | { kind: 'invalid'; reason: string } | { kind: 'header'; length: number; addresses: ProxiedAddresses | null };

const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
/** the longest v1 line, CRLF included (the protocol's limit, and nginx's) */
const V1_MAX = 107;
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** the longest v2 address block (addresses and TLVs) taken; a longer header closes the connection */
export const V2_MAX_BLOCK = 4096;

const incomplete: HeaderRead = { kind: 'incomplete' };
const invalid = (reason: string): HeaderRead => ({ kind: 'invalid', reason });

/** Whether `head` is a beginning of `whole` (or `whole` a beginning of `head`). */
function startsLike(head: Buffer, whole: Buffer): boolean {
  const n = Math.min(head.length, whole.length);
  return head.subarray(0, n).equals(whole.subarray(0, n));
}

/** Reads the PROXY protocol header (v1 text or v2 binary) at the start of a connection's bytes. */
export function readProxyHeader(head: Buffer): HeaderRead {
  if (head.length === 0) return incomplete;
  if (startsLike(head, V2_SIGNATURE)) return head.length < 16 ? incomplete : readV2(head);
  if (startsLike(head, V1_PREFIX)) return head.length < V1_PREFIX.length ? incomplete : readV1(head);
  return invalid('no PROXY protocol header');
}

const validPort = (text: string) => /^(0|[1-9]\d{0,4})$/.test(text) && Number(text) <= 65535;

function readV1(head: Buffer): HeaderRead {
  const end = head.subarray(0, V1_MAX).indexOf('\r\n');
  if (end < 0) return head.length >= V1_MAX ? invalid('PROXY v1 line longer than 107 bytes') : incomplete;
  const line = head.toString('latin1', 0, end);
  const length = end + 2;
  if (line === 'PROXY UNKNOWN' || line.startsWith('PROXY UNKNOWN ')) return { kind: 'header', length, addresses: null };
  let parsed: V1ProxyProtocol;
  try {
    parsed = V1ProxyProtocol.parse(`${line}\r\n`);
  } catch {
    return invalid('malformed PROXY v1 line');
  }
  const family = parsed.inetProtocol === 'TCP4' ? 4 : parsed.inetProtocol === 'TCP6' ? 6 : 0;
  const [, , , , srcPort, dstPort] = line.split(' ');
  const { source, destination } = parsed;
  if (family === 0 || isIP(source.ipAddress) !== family || isIP(destination.ipAddress) !== family || !validPort(srcPort ?? '') || !validPort(dstPort ?? '')) {
    return invalid('malformed PROXY v1 line');
  }
  return { kind: 'header', length, addresses: { sourceAddress: source.ipAddress, sourcePort: source.port, destinationAddress: destination.ipAddress, destinationPort: destination.port } };
}

/** 16 bytes, as IPv6 text in its shortest form */
function ipv6Text(bytes: readonly number[]): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

function readV2(head: Buffer): HeaderRead {
  const versionCommand = head[12]!;
  if (versionCommand >> 4 !== 2) return invalid('PROXY v2 header with an unknown version');
  const command = versionCommand & 0x0f;
  if (command > 1) return invalid('PROXY v2 header with an unknown command');
  const block = head.readUInt16BE(14);
  if (block > V2_MAX_BLOCK) return invalid('PROXY v2 header too long');
  const length = 16 + block;
  if (head.length < length) return incomplete;
  const family = head[13]! >> 4;
  // LOCAL (the proxy's own health checks) and the families without an IP address keep the peer's address
  if (command === 0 || family === 0 || family === 3) return { kind: 'header', length, addresses: null };
  let parsed: V2ProxyProtocol;
  try {
    parsed = V2ProxyProtocol.parse(Uint8Array.from(head.subarray(0, length)));
  } catch {
    return invalid('malformed PROXY v2 header');
  }
  const address = parsed.proxyAddress;
  if (address instanceof IPv4ProxyAddress) {
    const text = (bytes: readonly number[]) => bytes.join('.');
    return { kind: 'header', length, addresses: { sourceAddress: text(address.sourceAddress.address), sourcePort: address.sourcePort, destinationAddress: text(address.destinationAddress.address), destinationPort: address.destinationPort } };
  }
  if (address instanceof IPv6ProxyAddress) {
    return { kind: 'header', length, addresses: { sourceAddress: ipv6Text(address.sourceAddress.address), sourcePort: address.sourcePort, destinationAddress: ipv6Text(address.destinationAddress.address), destinationPort: address.destinationPort } };
  }
  return invalid('PROXY v2 header with an unknown address family');
}
