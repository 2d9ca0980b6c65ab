import { compareEpochs } from '@gatehouse/core';

/** What orders configs: the cluster epoch first, the version within an epoch. */
export interface ConfigPosition {
  version: number;
  epoch?: string | null;
}

export type Succession = 'newer-epoch' | 'newer-version' | 'same' | 'older-version' | 'older-epoch';

/**
 * Where `incoming` stands against what is `serving` (null: nothing yet). A snapshot of a later epoch follows
 * whatever its version (the control plane's database was reset or restored); within one epoch only a higher version
 * follows; an earlier epoch never does, so a replayed old snapshot cannot take a data plane back.
 */
export function succession(incoming: ConfigPosition, serving: ConfigPosition | null): Succession {
  if (!serving) return 'newer-version';
  const byEpoch = compareEpochs(incoming.epoch, serving.epoch);
  if (byEpoch > 0) return 'newer-epoch';
  if (byEpoch < 0) return 'older-epoch';
  if (incoming.version > serving.version) return 'newer-version';
  return incoming.version === serving.version ? 'same' : 'older-version';
}

export function follows(incoming: ConfigPosition, serving: ConfigPosition | null): boolean {
  const s = succession(incoming, serving);
  return s === 'newer-epoch' || s === 'newer-version';
}
