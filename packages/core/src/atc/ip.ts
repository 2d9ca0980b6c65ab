import { isIPv4, isIPv6 } from 'node:net';
import type { IpValue } from './ast';

/** The bytes of an IPv4 (4) or IPv6 (16) address in text, or null when it is not one. */
export function ipBytes(text: string): Uint8Array | null {
  if (isIPv4(text)) return Uint8Array.from(text.split('.').map(Number));
  if (!isIPv6(text)) return null;
  let head = text;
  let tail = '';
  const gap = text.indexOf('::');
  if (gap >= 0) {
    head = text.slice(0, gap);
    tail = text.slice(gap + 2);
  }
  const groups = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const v4 = piece.split('.').map(Number);
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else out.push(parseInt(piece, 16));
    }
    return out;
  };
  const front = groups(head);
  const back = groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  return bytes;
}

/** A client or local address as sockets report it: `::ffff:a.b.c.d` is the IPv4 address it carries. */
export function socketAddressBytes(address: string | undefined): Uint8Array | null {
  if (address === undefined || address === '') return null;
  if (address.startsWith('::ffff:') && address.includes('.')) return ipBytes(address.slice(7));
  return ipBytes(address);
}

/** `a.b.c.d/n` or `v6/n`: the network, or why it is not one (host bits set, a prefix too long). */
export function parseCidr(text: string): IpValue | string {
  const slash = text.lastIndexOf('/');
  const bytes = ipBytes(text.slice(0, slash));
  const prefix = Number(text.slice(slash + 1));
  if (bytes === null) return text.includes(':') ? 'invalid IPv6 address syntax' : 'invalid IPv4 address syntax';
  if (prefix > bytes.length * 8) return 'network length is too long';
  for (let bit = prefix; bit < bytes.length * 8; bit++) {
    if ((bytes[bit >> 3]! >> (7 - (bit & 7))) & 1) return 'host part of address was not zero';
  }
  return { bytes, prefix, text };
}

export function parseAddress(text: string): IpValue | string {
  const bytes = ipBytes(text);
  if (bytes === null) return text.includes(':') ? 'invalid IPv6 address syntax' : 'invalid IPv4 address syntax';
  return { bytes, prefix: bytes.length * 8, text };
}

/** Whether `address` lies in `network` (an IPv4 address is never in an IPv6 network, nor the reverse). */
export function inNetwork(address: Uint8Array, network: IpValue): boolean {
  if (address.length !== network.bytes.length) return false;
  const full = network.prefix >> 3;
  for (let i = 0; i < full; i++) if (address[i] !== network.bytes[i]) return false;
  const rest = network.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (address[full]! & mask) === (network.bytes[full]! & mask);
}

export function sameAddress(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
