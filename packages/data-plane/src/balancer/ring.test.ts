import { describe, expect, it } from '@jest/globals';
import { HashRing } from './ring';

const members = (n: number, weight = 100) => Array.from({ length: n }, (_, i) => ({ key: `10.0.0.${i + 1}:80`, weight }));
const keys = Array.from({ length: 5000 }, (_, i) => `user-${i}`);
const any = () => true;

describe('HashRing', () => {
  it('sends the same key to the same member while the set is unchanged', () => {
    const a = new HashRing(members(4), 10000);
    const b = new HashRing(members(4), 10000);
    for (const key of keys.slice(0, 500)) expect(a.lookup(key, any)!.key).toBe(b.lookup(key, any)!.key);
  });

  it('spreads keys by weight', () => {
    const ring = new HashRing([{ key: 'a:1', weight: 300 }, { key: 'b:1', weight: 100 }], 10000);
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(ring.lookup(key, any)!.key, (counts.get(ring.lookup(key, any)!.key) ?? 0) + 1);
    const share = counts.get('a:1')! / keys.length;
    expect(share).toBeGreaterThan(0.68);
    expect(share).toBeLessThan(0.82);
  });

  it('moves only about the newcomer’s share of keys when a member is added', () => {
    const before = new HashRing(members(4), 10000);
    const after = new HashRing(members(5), 10000);
    let moved = 0;
    for (const key of keys) {
      const was = before.lookup(key, any)!.key;
      const now = after.lookup(key, any)!.key;
      if (was !== now) {
        moved++;
        // a key that moves, moves to the newcomer
        expect(now).toBe('10.0.0.5:80');
      }
    }
    expect(moved / keys.length).toBeGreaterThan(0.1);
    expect(moved / keys.length).toBeLessThan(0.3);
  });

  it('skips members the caller refuses and walks on to the next one', () => {
    const ring = new HashRing(members(3), 1000);
    const first = ring.lookup('k', any)!;
    const next = ring.lookup('k', (m) => m !== first)!;
    expect(next).not.toBe(first);
    expect(ring.lookup('k', () => false)).toBeNull();
  });
});
