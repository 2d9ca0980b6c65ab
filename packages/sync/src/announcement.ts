import type { SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';
import { parseSignedDelta } from './signing';

/** The `{version, hash, epoch}` announced and kept as the head for a snapshot. */
export function announcementOf(snapshot: Pick<SignedSnapshot, 'version' | 'hash' | 'epoch'>): SnapshotAnnouncement {
  const announcement: SnapshotAnnouncement = { version: snapshot.version, hash: snapshot.hash };
  if (snapshot.epoch !== undefined) announcement.epoch = snapshot.epoch;
  return announcement;
}

/** An announcement as received (JSON text), with the delta it may carry; null when malformed. */
export function parseAnnouncement(text: string): SnapshotAnnouncement | null {
  try {
    const value = JSON.parse(text) as Partial<SnapshotAnnouncement> | null;
    if (value && Number.isSafeInteger(value.version) && typeof value.hash === 'string') {
      const announcement: SnapshotAnnouncement = { version: value.version!, hash: value.hash };
      if (typeof value.epoch === 'string') announcement.epoch = value.epoch;
      const delta = value.delta === undefined ? null : parseSignedDelta(value.delta);
      if (delta) announcement.delta = delta;
      return announcement;
    }
  } catch {}
  return null;
}
