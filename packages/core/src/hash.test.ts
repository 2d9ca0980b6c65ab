import { describe, expect, it } from '@jest/globals';
import { canonicalJson, hashConfig } from './hash';
import { emptyConfig } from './snapshot';

describe('canonicalJson', () => {
  it('orders keys at every level so equal values hash equally', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
  });
});

describe('hashConfig', () => {
  it('changes the overall hash and only the touched section hash', () => {
    const a = hashConfig(emptyConfig());
    const changed = emptyConfig();
    changed.key_sets.push({ id: '6b1c1c5e-6f4a-4b8a-9f1e-0b7a7f0c5f11', name: 'ks' });
    const b = hashConfig(changed);
    expect(a.hash).toMatch(/^[0-9a-f]{32}$/);
    expect(b.hash).not.toBe(a.hash);
    expect(b.hashes.key_sets).not.toBe(a.hashes.key_sets);
    expect(b.hashes.services).toBe(a.hashes.services);
  });
});
