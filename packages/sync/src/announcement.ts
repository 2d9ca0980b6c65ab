import type { SignedSnapshot, SnapshotAnnouncement } from '@gatehouse/core';

/** The `{version, hash, epoch}` announced and kept as the head for a snapshot. */
export function announcementOf(snapshot: Pick<SignedSnapshot, 'version' | 'hash' | 'epoch'>): SnapshotAnnouncement {
  const announcement: SnapshotAnnouncement = { version: snapshot.version, hash: snapshot.hash };
  if (snapshot.epoch !== undefined) announcement.epoch = snapshot.epoch;
  return announcement;
}
