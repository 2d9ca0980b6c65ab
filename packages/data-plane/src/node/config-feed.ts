import type { Snapshot, SnapshotDelta } from '@gatehouse/core';

/**
 * What a feed delivers to: the data plane node's config. Each call compiles (or applies) and swaps at once, and throws
 * to refuse, the serving config then staying as it was.
 */
export interface ConfigSink {
  /** a verified snapshot: compiled and swapped in */
  load(snapshot: Snapshot): void;
  /** a verified delta that follows the serving config: applied and swapped in */
  applyDelta(delta: SnapshotDelta): void;
  /** the serving content under a later version (equal hash): nothing is compiled */
  relabel(version: number): void;
  /** what is served, or null while nothing is loaded */
  serving(): { version: number; hash: string } | null;
}

/**
 * Where a data plane node's config comes from: the config bus (receive, verify, decode, order, disk cache, heartbeats:
 * `BusFeed`) or, in a proxy worker, its primary over IPC (`PrimaryFeed`).
 */
export interface ConfigFeed {
  /** Delivers to `sink` from now on; what the feed holds at hand (the disk cache, the primary's start config) is delivered before it resolves. */
  open(sink: ConfigSink): Promise<void>;
  /** Follows the source: subscribes, fetches the latest, keeps up. */
  follow(): Promise<void>;
  close(): Promise<void>;
}
