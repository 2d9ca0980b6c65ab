/** 32-bit FNV-1a followed by a murmur-style finaliser: cheap, and well spread for ring positions. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export interface RingMember {
  /** stable identity of the member (an address `ip:port`); its points derive from it */
  key: string;
  weight: number;
}

/** at most this many points in one ring: beyond it every member's count is scaled down alike */
export const MAX_RING_POINTS = 1 << 20;

/**
 * A consistent-hashing ring with virtual nodes. A member gets points in proportion to its weight at a fixed density
 * set by `slots` (the default 10,000 gives a weight-100 member 160 points), each placed by hashing `key#n`. A
 * member's points depend only on its own key and weight, never on the others: adding a member moves only the keys
 * that now land on the newcomer's points (about its share of the weight), and removing one moves only its own keys.
 */
export class HashRing<T extends RingMember> {
  private readonly points: Uint32Array;
  private readonly owners: T[];
  private readonly memberCount: number;

  constructor(members: readonly T[], slots: number) {
    // the default slots (10,000) give a weight-100 member 160 points
    const perWeight = slots / 6_250;
    const total = members.reduce((n, m) => n + Math.max(0, m.weight), 0);
    const scale = total * perWeight > MAX_RING_POINTS ? MAX_RING_POINTS / (total * perWeight) : 1;
    const entries: Array<{ point: number; owner: T }> = [];
    if (total > 0) {
      for (const member of members) {
        if (member.weight <= 0) continue;
        const count = Math.max(1, Math.round(member.weight * perWeight * scale));
        for (let n = 0; n < count; n++) entries.push({ point: hash32(`${member.key}#${n}`), owner: member });
      }
    }
    entries.sort((a, b) => a.point - b.point || (a.owner.key < b.owner.key ? -1 : 1));
    this.points = Uint32Array.from(entries.map((e) => e.point));
    this.owners = entries.map((e) => e.owner);
    this.memberCount = new Set(this.owners).size;
  }

  get size(): number {
    return this.points.length;
  }

  /** index of the first point at or after the key's hash (wrapping) */
  private start(hash: number): number {
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.points[mid]! < hash) lo = mid + 1;
      else hi = mid;
    }
    return lo === this.points.length ? 0 : lo;
  }

  /** The owner of the key's point; walks on to the next owner `accept` admits (an unhealthy member is skipped). */
  lookup(key: string, accept: (owner: T) => boolean): T | null {
    const n = this.points.length;
    if (n === 0) return null;
    const first = this.start(hash32(key));
    const seen = new Set<T>();
    for (let i = 0; i < n; i++) {
      const owner = this.owners[(first + i) % n]!;
      if (seen.has(owner)) continue;
      if (accept(owner)) return owner;
      seen.add(owner);
      if (seen.size === this.memberCount) break;
    }
    return null;
  }
}
