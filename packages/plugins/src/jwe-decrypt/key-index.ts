import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { SnapshotConfig, SnapshotKey } from '@gatehouse/core';

/**
 * Private keys by key set and kid, built once per snapshot so a request costs two Map lookups.
 * A key whose private half cannot be loaded (public-only material) is kept as `null`: it is found, and refused.
 */
export interface JweKeyIndex {
  /** key-set name → id, and id → id */
  setIds: Map<string, string>;
  keysBySet: Map<string, Map<string, KeyObject | null>>;
}

function privateKeyOf(key: SnapshotKey): KeyObject | null {
  try {
    if (key.jwk != null) {
      const jwk = JSON.parse(key.jwk);
      if (jwk == null || typeof jwk !== 'object' || jwk.d === undefined) return null;
      return createPrivateKey({ key: jwk, format: 'jwk' });
    }
    if (key.pem?.private_key) return createPrivateKey(key.pem.private_key);
  } catch {
    // A key that does not load cannot decrypt; validation on the control plane makes this rare.
  }
  return null;
}

export function buildKeyIndex(config: Pick<SnapshotConfig, 'key_sets' | 'keys'>): JweKeyIndex {
  const setIds = new Map<string, string>();
  const keysBySet = new Map<string, Map<string, KeyObject | null>>();
  for (const set of config.key_sets ?? []) {
    setIds.set(set.id, set.id);
    keysBySet.set(set.id, new Map());
  }
  // Kong looks sets up by name; names are written last so that a name wins over an id spelled the same.
  for (const set of config.key_sets ?? []) if (set.name != null) setIds.set(set.name, set.id);
  for (const key of config.keys ?? []) {
    if (!key.set) continue;
    const byKid = keysBySet.get(key.set.id);
    if (byKid) byKid.set(key.kid, privateKeyOf(key));
  }
  return { setIds, keysBySet };
}
