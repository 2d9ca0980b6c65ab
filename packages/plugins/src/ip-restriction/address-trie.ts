import { isIP } from 'node:net';

/** An address as bytes: 4 for IPv4, 16 for IPv6 (IPv4-mapped IPv6 is read as IPv4). null when not an address. */
export function addressBytes(address: string): Uint8Array | null {
  let text = address.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const family = isIP(text);
  if (family === 4) return Uint8Array.from(text.split('.').map(Number));
  if (family !== 6) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  if (mapped !== null) return addressBytes(mapped[1]!);
  return ipv6Bytes(text);
}

function ipv6Bytes(text: string): Uint8Array {
  let tail = text;
  const bytes = new Uint8Array(16);
  // a trailing dotted IPv4 (`::1.2.3.4`) fills the last four bytes
  let v4: number[] | null = null;
  const lastColon = tail.lastIndexOf(':');
  if (tail.slice(lastColon + 1).includes('.')) {
    v4 = tail.slice(lastColon + 1).split('.').map(Number);
    tail = `${tail.slice(0, lastColon + 1)}0:0`;
  }
  const [head, rest] = tail.includes('::') ? tail.split('::') as [string, string] : [tail, null];
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === null || rest === '' ? [] : rest.split(':');
  const groups = rest === null ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - restGroups.length).fill('0'), ...restGroups];
  for (let i = 0; i < 8; i++) {
    const value = parseInt(groups[i] ?? '0', 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  }
  if (v4 !== null) bytes.set(v4, 12);
  return bytes;
}

/** Parses `address` or `address/prefix`; null when it is neither. */
export function parseCidr(entry: string): { bytes: Uint8Array; prefix: number } | null {
  const slash = entry.indexOf('/');
  const bytes = addressBytes(slash < 0 ? entry : entry.slice(0, slash));
  if (bytes === null) return null;
  const max = bytes.length * 8;
  if (slash < 0) return { bytes, prefix: max };
  const text = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(text)) return null;
  const prefix = Number(text);
  // an IPv4-mapped IPv6 block (`::ffff:10.0.0.0/104`) becomes the IPv4 block it covers
  if (bytes.length === 4 && isIP(entry.slice(0, slash)) === 6) return prefix < 96 || prefix > 128 ? null : { bytes, prefix: prefix - 96 };
  return prefix > max ? null : { bytes, prefix };
}

/**
 * A binary trie of address blocks, one per family: a lookup walks at most 32 (IPv4) or 128 (IPv6) levels, whatever
 * the number of blocks. Nodes live in flat arrays: children[2n] / children[2n+1], 0 = none; terminal[n] = a block
 * ends here.
 */
class FamilyTrie {
  private children: number[] = [0, 0];
  private terminal: boolean[] = [false];

  insert(bytes: Uint8Array, prefix: number): void {
    let node = 0;
    for (let bit = 0; bit < prefix; bit++) {
      if (this.terminal[node]) return; // a wider block already covers this one
      const side = (bytes[bit >> 3]! >> (7 - (bit & 7))) & 1;
      let next = this.children[node * 2 + side]!;
      if (next === 0) {
        next = this.terminal.length;
        this.terminal.push(false);
        this.children.push(0, 0);
        this.children[node * 2 + side] = next;
      }
      node = next;
    }
    this.terminal[node] = true;
  }

  contains(bytes: Uint8Array): boolean {
    let node = 0;
    const bits = bytes.length * 8;
    for (let bit = 0; ; bit++) {
      if (this.terminal[node]) return true;
      if (bit === bits) return false;
      const side = (bytes[bit >> 3]! >> (7 - (bit & 7))) & 1;
      node = this.children[node * 2 + side]!;
      if (node === 0) return false;
    }
  }
}

/** Addresses and CIDR blocks of both families, compiled once; `has` costs at most one walk of the address's bits. */
export class AddressSet {
  private readonly v4 = new FamilyTrie();
  private readonly v6 = new FamilyTrie();
  readonly size: number;

  constructor(entries: readonly string[]) {
    let size = 0;
    for (const entry of entries) {
      const block = parseCidr(entry);
      if (block === null) continue;
      (block.bytes.length === 4 ? this.v4 : this.v6).insert(block.bytes, block.prefix);
      size++;
    }
    this.size = size;
  }

  has(address: string): boolean {
    const bytes = addressBytes(address);
    if (bytes === null) return false;
    return (bytes.length === 4 ? this.v4 : this.v6).contains(bytes);
  }
}
