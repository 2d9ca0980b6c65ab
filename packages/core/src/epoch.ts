import { randomBytes } from 'node:crypto';

/**
 * The cluster epoch: which incarnation of the control plane's database a config version belongs to. Versions count
 * within an epoch; a database reset or restore starts a new epoch, so data planes can tell "a newer config from a
 * database that went back" from "a replay of an old config".
 *
 * Text form `<milliseconds since 1970, 13 digits>-<16 hex chars>`. Epochs are ordered by their time, then by the
 * whole text (so two control planes always agree); a snapshot without an epoch (older control planes) comes before
 * every epoch.
 */
export const EPOCH_PATTERN = /^(\d{13,16})-([0-9a-f]{16})$/;

export function isEpoch(value: unknown): value is string {
  return typeof value === 'string' && EPOCH_PATTERN.test(value);
}

/** The time part of an epoch in ms, or -1 for a missing or malformed one. */
export function epochTime(epoch: string | null | undefined): number {
  const match = typeof epoch === 'string' ? EPOCH_PATTERN.exec(epoch) : null;
  return match ? Number(match[1]) : -1;
}

/** A new epoch, later than `after` (if given) even when this machine's clock is behind the one that made it. */
export function newEpoch(after?: string | null, now = Date.now()): string {
  const time = Math.max(now, epochTime(after) + 1);
  return `${String(time).padStart(13, '0')}-${randomBytes(8).toString('hex')}`;
}

/** < 0 when a comes before b, 0 when equal, > 0 when a comes after b. Missing or malformed epochs come first. */
export function compareEpochs(a: string | null | undefined, b: string | null | undefined): number {
  const ta = epochTime(a);
  const tb = epochTime(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (ta < 0) return 0;
  return a! < b! ? -1 : a! > b! ? 1 : 0;
}
