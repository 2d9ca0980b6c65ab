import { normalizeTarget, targets, upstreams } from '@gatehouse/core';
import type { EntityKind } from '../service/entity-kind';

/** Upstreams: the generic path (name unique, the hashing checks of the definition). */
export const upstreamKind: EntityKind = { def: upstreams };

/** Targets: `target` normalised to `host:port` by the definition; nested under their upstream. */
export const targetKind: EntityKind = {
  def: targets,
  normalizeKey: (ref) => normalizeTarget(ref) ?? ref,
  // the same host:port may be a target of several upstreams: by key, a target is found only under its upstream
  keyUniqueInScope: true,
};
