import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SignedDelta, SignedSnapshot } from '@gatehouse/core';
import {
  hasValidSignature,
  isSealed,
  parseSignedDelta,
  parseSignedSnapshot,
  readTextInSlices,
  writeTextInSlices,
  type SnapshotKeys,
  type SyncLogger,
} from '@gatehouse/sync';

/** deltas kept in the disk cache beside the snapshot before the cache is compacted onto a newer stored snapshot */
const DELTAS_BEFORE_COMPACTION = 2000;
/** ms without a delta before the cache is compacted */
const COMPACTION_QUIET_MS = 2000;
/**
 * ms between further tries while the bus's stored snapshot does not yet cover the cached deltas: the control plane
 * stores it once writes pause, which at 100,000 consumers takes longer than the quiet time above
 */
const COMPACTION_RETRY_MS = 3000;
/** tries after the first before the cache waits for the next deltas */
const COMPACTION_RETRIES = 20;

export interface SnapshotDiskCacheOptions {
  /** the snapshot's file; the deltas applied after it are appended to `<file>.deltas` */
  file: string;
  /** whether deltas are kept beside the snapshot (a data plane that applies deltas) */
  keepsDeltas: boolean;
  keys: SnapshotKeys;
  logger: SyncLogger;
  /** the bus's stored snapshot, which compaction moves the cache onto */
  fetchStored(): Promise<SignedSnapshot | null>;
  /** the cluster epoch of the serving config: the cache only moves onto a stored snapshot of that epoch */
  servingEpoch(): string | null;
}

/**
 * The data plane's last good config on disk, kept across restarts: the last full snapshot, and the deltas applied
 * after it, one line each. Past a threshold of deltas the cache is compacted onto a newer snapshot stored on the bus.
 * Files are written whole through a temporary file and a rename (a crash never leaves a torn cache), mode 0600
 * because snapshots hold secrets.
 */
export class SnapshotDiskCache {
  /** the cache holds a snapshot or delta that is not sealed (written before the control plane sealed them) */
  unsealed = false;
  /** the version of the snapshot in the file, and the deltas appended after it */
  private snapshotVersion: number | null = null;
  /** how many deltas the file holds after its snapshot (the deltas themselves are only on disk) */
  private deltas = 0;
  /** how many cached deltas there were at the last compaction attempt (one attempt per threshold's worth of deltas) */
  private compactionTriedAt = 0;
  private compactionTimer: NodeJS.Timeout | null = null;
  /** further tries left while the stored snapshot lags the cached deltas */
  private compactionRetries = COMPACTION_RETRIES;
  private writes: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: SnapshotDiskCacheOptions) {}

  /** The cached snapshot, or null when there is none or it cannot be read (said in the log). */
  async readSnapshot(): Promise<SignedSnapshot | null> {
    const { file, logger } = this.options;
    let text: string;
    try {
      text = await readTextInSlices(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') logger.warn('cannot read the snapshot cache', { file, error: (error as Error).message });
      return null;
    }
    try {
      return parseSignedSnapshot(text);
    } catch (error) {
      logger.error('snapshot cache unusable', { file, error: (error as Error).message });
      return null;
    }
  }

  /** the cached snapshot was loaded: the deltas read next count after it */
  snapshotLoaded(signed: SignedSnapshot): void {
    this.snapshotVersion = signed.version;
    this.unsealed = !isSealed(signed);
  }

  /** The deltas kept after the loaded snapshot, in file order; none when no snapshot was loaded from the cache. */
  async readDeltas(): Promise<SignedDelta[]> {
    if (!this.options.keepsDeltas || this.snapshotVersion === null) return [];
    let lines: string[];
    try {
      lines = (await readTextInSlices(`${this.options.file}.deltas`)).split('\n');
    } catch {
      return [];
    }
    const deltas: SignedDelta[] = [];
    for (const line of lines) {
      const delta = line ? parseSignedDelta(line) : null;
      if (delta) deltas.push(delta);
    }
    return deltas;
  }

  /** a kept delta was read back; `counted` when it is still in the file's chain (applied, or already held) */
  deltaLoaded(signed: SignedDelta, counted: boolean): void {
    if (counted) this.deltas++;
    if (!isSealed(signed)) this.unsealed = true;
  }

  /** Appends an applied delta; past a threshold, the cache moves onto a newer stored snapshot. */
  appendDelta(signed: SignedDelta): void {
    const { file, logger } = this.options;
    if (this.snapshotVersion === null) return;
    if (!isSealed(signed)) this.unsealed = true;
    this.deltas++;
    const line = `${JSON.stringify(signed)}\n`;
    this.writes = this.writes
      .then(() => appendFile(`${file}.deltas`, line, { mode: 0o600 }))
      .catch((error: Error) => logger.warn('cannot write the snapshot cache', { file, error: error.message }));
    // compacted once deltas pause for a moment (fetching a large stored snapshot is not done between two deltas), or
    // during a long stream of writes every ten times the threshold
    if (this.compactionTimer) clearTimeout(this.compactionTimer);
    this.compactionTimer = null;
    const due = this.deltas - this.compactionTriedAt;
    if (due < DELTAS_BEFORE_COMPACTION || this.stopped) return;
    this.compactionRetries = COMPACTION_RETRIES;
    if (due >= 10 * DELTAS_BEFORE_COMPACTION) return this.compactNow();
    this.compactLater(COMPACTION_QUIET_MS);
  }

  /** A full snapshot just loaded from the bus becomes the cache, with no deltas after it. */
  async writeSnapshot(signed: SignedSnapshot): Promise<void> {
    const { file, keepsDeltas } = this.options;
    this.snapshotVersion = signed.version;
    this.deltas = 0;
    this.compactionTriedAt = 0;
    this.unsealed = !isSealed(signed);
    const write = this.writes.then(async () => {
      await this.writeFileAtomically(file, JSON.stringify(signed));
      if (keepsDeltas) await rm(`${file}.deltas`, { force: true }).catch(() => {});
    });
    this.writes = write;
    await write;
  }

  /** Stops compaction; resolves once the writes under way are done. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.compactionTimer) clearTimeout(this.compactionTimer);
    this.compactionTimer = null;
    await this.writes;
  }

  private compactNow(): void {
    this.compactionTimer = null;
    this.compactionTriedAt = this.deltas;
    this.writes = this.writes.then(() => this.compact());
  }

  private compactLater(ms: number): void {
    if (this.compactionTimer) clearTimeout(this.compactionTimer);
    this.compactionTimer = setTimeout(() => this.compactNow(), ms);
    this.compactionTimer.unref();
  }

  /** the stored snapshot left as many deltas in the cache as there were: tried again in a while, a bounded number of times */
  private retryCompaction(): void {
    if (this.stopped || this.compactionRetries <= 0) return;
    this.compactionRetries--;
    this.compactLater(COMPACTION_RETRY_MS);
  }

  /** Moves the cache onto the bus's stored snapshot when it is newer than the cached one. */
  private async compact(): Promise<void> {
    const { file } = this.options;
    if (this.snapshotVersion === null || this.deltas < DELTAS_BEFORE_COMPACTION) return;
    let stored: SignedSnapshot | null;
    try {
      stored = await this.options.fetchStored();
    } catch {
      return this.retryCompaction();
    }
    if (!stored || (stored.epoch ?? null) !== this.options.servingEpoch()) return;
    if (stored.version <= this.snapshotVersion) return this.retryCompaction();
    // the signature only: the cache is verified in full when it is loaded, and decoding a large snapshot here would
    // hold up the proxy
    if (!hasValidSignature(stored, this.options.keys)) return;
    let lines: string[];
    try {
      lines = (await readTextInSlices(`${file}.deltas`)).split('\n');
    } catch {
      lines = [];
    }
    const kept = lines.filter((line) => {
      const delta = line ? parseSignedDelta(line) : null;
      return delta !== null && delta.version > stored.version;
    });
    // the snapshot first: a crash between the two leaves deltas the newer snapshot already holds, which loading skips
    await this.writeFileAtomically(file, JSON.stringify(stored));
    await this.writeFileAtomically(`${file}.deltas`, kept.map((line) => `${line}\n`).join(''));
    this.unsealed = !isSealed(stored) || kept.some((line) => !isSealed(parseSignedDelta(line)!));
    this.snapshotVersion = stored.version;
    this.deltas = kept.length;
    this.compactionTriedAt = 0;
    // a snapshot stored while writes went on: the deltas after it are moved onto the next one
    if (kept.length >= DELTAS_BEFORE_COMPACTION) this.retryCompaction();
  }

  /** temp file + rename: a crash mid-write never leaves a torn cache; 0600 because the snapshot holds secrets */
  private async writeFileAtomically(file: string, text: string): Promise<void> {
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      const handle = await open(temp, 'w', 0o600);
      try {
        await writeTextInSlices(handle, text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => {});
      this.options.logger.warn('cannot write the snapshot cache', { file, error: (error as Error).message });
    }
  }
}
