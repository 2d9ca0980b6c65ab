import type { SignedDelta, SignedSnapshot, Snapshot, SnapshotDelta } from '@gatehouse/core';
import { isSealed, succession, verifyDelta, verifySnapshotInSlices, type SnapshotKeys, type VerifyOptions } from '@gatehouse/sync';
import type { SnapshotDiskCache } from '../disk-cache';
import type { DataPlaneSyncOptions, SnapshotSource } from './data-plane-sync-options';
import { next, type SyncState } from './ordering';
import type { ServingRecord } from './serving-record';

export type Outcome = 'applied' | 'unchanged' | 'stale' | 'rejected';

/**
 * Snapshots and deltas signed but not sealed (control planes of the release before sealing) are still loaded, so data
 * planes can be upgraded first; each is logged, and a disk cache holding one is replaced by the control plane's first
 * sealed snapshot.
 */
const VERIFY: VerifyOptions = { acceptUnsealed: true };

/** What the loader works with: DataPlaneSync's settings and parts. */
export interface SignedLoaderParts {
  options: DataPlaneSyncOptions;
  keys: SnapshotKeys;
  record: ServingRecord;
  cache: SnapshotDiskCache | null;
  phase(): { started: boolean; stopped: boolean };
  /** a heartbeat, sent after each full load */
  beat(): Promise<void>;
}

/**
 * The data plane's loading of what DataPlaneSync decided to take: a signed snapshot or delta is verified and decoded,
 * handed to the node (compile or apply, swap), recorded, and written to the disk cache; a refusal keeps the serving
 * config and is recorded.
 */
export class SignedLoader {
  /** set when a delta did not apply: the next fetch loads the stored snapshot even when it is not newer */
  rebuild = false;
  private unsealedWarned = false;
  private readonly options: DataPlaneSyncOptions;
  private readonly keys: SnapshotKeys;
  private readonly record: ServingRecord;
  private readonly cache: SnapshotDiskCache | null;
  private readonly phase: () => { started: boolean; stopped: boolean };
  private readonly beat: () => Promise<void>;

  constructor(parts: SignedLoaderParts) {
    ({ options: this.options, keys: this.keys, record: this.record, cache: this.cache, phase: this.phase, beat: this.beat } = parts);
  }

  /** What the ordering rules decide on: the serving config and the node's mode (`rebuilding` defaults to the loader's). */
  state(rebuilding = this.rebuild): SyncState {
    return {
      serving: this.record.serving(),
      followsDeltas: this.options.applyDelta !== undefined,
      rebuilding,
      cacheUnsealed: this.cache?.unsealed ?? false,
    };
  }

  /** Verifies and applies one delta if it follows the serving version; 'gap' when it does not. */
  applyDelta(signed: SignedDelta, source: SnapshotSource): Outcome | 'gap' {
    const [action] = next(this.state(), { on: 'delta', delta: signed });
    if (action?.do !== 'apply-delta') return action?.do === 'ignore' ? 'stale' : 'gap';
    const serving = this.record.version();
    let delta: SnapshotDelta;
    try {
      delta = verifyDelta(signed, this.keys, VERIFY);
    } catch (error) {
      // not from the control plane: refused; the bus is asked what the head really is
      this.record.failed(`delta ${signed.from}→${signed.version} rejected: ${(error as Error).message}`);
      this.options.logger.error('delta rejected; the serving config is kept', { source, from: signed.from, version: signed.version, error: (error as Error).message });
      return 'rejected';
    }
    try {
      this.options.applyDelta!(delta);
    } catch (error) {
      this.record.failed(`delta ${signed.from}→${signed.version} rejected: ${(error as Error).message}`);
      this.options.logger.error('delta rejected; the serving config is kept and the full snapshot fetched', {
        source,
        from: signed.from,
        version: signed.version,
        serving,
        error: (error as Error).message,
      });
      this.rebuild = true;
      return 'rejected';
    }
    this.record.applied(delta, source);
    if (!isSealed(signed)) this.warnUnsealed('delta', source, signed.version);
    if (source === 'bus') this.cache?.appendDelta(signed);
    try {
      this.options.onDeltaApplied?.(delta, source);
    } catch (error) {
      this.options.logger.error('onDeltaApplied handler failed', { error: (error as Error).message });
    }
    return 'applied';
  }

  /** Applies kept deltas in order from the serving version; false when they left a gap or one did not apply. */
  applyChain(deltas: readonly SignedDelta[], source: SnapshotSource): boolean {
    for (const signed of deltas) {
      const outcome = this.applyDelta(signed, source);
      if (outcome === 'gap' || outcome === 'rejected') return false;
    }
    return true;
  }

  /**
   * The bus holds the serving version sealed while the disk cache holds it in clear (written before the control plane
   * was upgraded): the cache becomes the sealed snapshot, checked in full first.
   */
  async reseal(signed: SignedSnapshot): Promise<void> {
    try {
      const snapshot = await verifySnapshotInSlices(signed, this.keys);
      if (snapshot.hash !== this.record.hash()) return;
    } catch (error) {
      this.options.logger.warn('the stored sealed snapshot does not verify; the disk cache is kept as it is', { error: (error as Error).message });
      return;
    }
    await this.cache?.writeSnapshot(signed);
    this.options.logger.info('disk cache rewritten with the sealed snapshot', { version: signed.version });
  }

  /** said once per process: a control plane of the earlier release publishes every version unsealed */
  private warnUnsealed(what: 'snapshot' | 'delta', source: SnapshotSource, version: number): void {
    if (this.unsealedWarned) return;
    this.unsealedWarned = true;
    this.options.logger.warn(`${what} loaded without sealing: upgrade the control plane so Redis and the disk cache hold no secret in clear`, { source, version });
  }

  /** Loads a full snapshot the ordering rules take (verify, decode, compile, swap, cache); `rebuild` reloads the serving epoch's. */
  async load(signed: SignedSnapshot, source: SnapshotSource, rebuild = false): Promise<Outcome> {
    if (this.phase().stopped) return 'stale';
    const serving = this.record.version();
    const [action] = next(this.state(rebuild), { on: 'snapshot', snapshot: signed });
    if (action?.do === 'keep-serving') {
      if (action.why === 'older') this.refuseOlder(signed);
      return 'stale';
    }
    // a new epoch with the serving hash is still loaded: the data plane must move to the epoch (a replay of the old
    // epoch is then refused), and compiling once per epoch change costs little
    if (action?.do === 'relabel') {
      if (this.options.relabel) {
        this.options.relabel(signed.version, signed.epoch ?? null);
        this.record.relabelled(signed.version);
        if (source === 'bus') await this.cache?.writeSnapshot(signed);
      }
      return 'unchanged';
    }

    let snapshot: Snapshot;
    try {
      snapshot = await verifySnapshotInSlices(signed, this.keys, VERIFY);
      // deltas may have moved the serving config on while the payload was decoded
      if (!rebuild && this.overtaken(signed)) return 'stale';
      await this.options.apply(snapshot);
    } catch (error) {
      this.record.failed(`snapshot version ${signed.version} rejected: ${(error as Error).message}`);
      this.options.logger.error('snapshot rejected; the last good config keeps serving', {
        source,
        version: signed.version,
        serving,
        error: (error as Error).message,
      });
      return 'rejected';
    }

    if (action?.do === 'load' && action.newEpoch && serving !== null && !rebuild) {
      this.options.logger.warn('config from a new cluster epoch loaded (the control plane database was reset or restored)', {
        version: snapshot.version,
        epoch: snapshot.epoch,
        previous_version: serving,
        previous_epoch: this.record.epoch,
      });
    }
    this.record.applied(snapshot, source);
    this.options.logger.info('config loaded', { source, version: snapshot.version, hash: snapshot.hash });
    if (!isSealed(signed)) this.warnUnsealed('snapshot', source, signed.version);
    if (source === 'bus') await this.cache?.writeSnapshot(signed);
    try {
      this.options.onApplied?.(snapshot, source);
    } catch (error) {
      this.options.logger.error('onApplied handler failed', { error: (error as Error).message });
    }
    if (this.phase().started && !this.phase().stopped) void this.beat();
    return 'applied';
  }

  /** A snapshot older than the serving config: said, and the serving config kept. */
  refuseOlder(signed: SignedSnapshot): void {
    this.options.logger.warn('stored snapshot is older than the serving one; keeping the serving one', {
      stored: signed.version,
      stored_epoch: signed.epoch,
      serving: this.record.version(),
      serving_epoch: this.record.epoch,
    });
  }

  /** whether the serving config is now this snapshot's or a later one */
  private overtaken(signed: SignedSnapshot): boolean {
    const order = succession(signed, this.record.position());
    return order === 'same' || order === 'older-version' || order === 'older-epoch';
  }
}
