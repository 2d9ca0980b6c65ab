import type { Snapshot, SnapshotDelta } from '@gatehouse/core';
import { applyDelta } from '../compile/apply-delta';
import { compile } from '../compile/compile';
import type { CompiledConfig } from '../compile/types';
import { ConfigHolder } from '../config-holder';
import { LoadReclaimer } from '../memory/reclaim-after-load';
import type { ConfigFeed, ConfigSink } from './config-feed';

/** one per process: whatever loads a full configuration in it (a data plane, its primary, a proxy worker) */
export const processReclaimer = new LoadReclaimer();

export interface NodeLogger {
  warn(message: string, detail?: Record<string, unknown>): void;
}

/** What the node says of each change it takes (DataPlaneMetrics in a process that proxies, a counter in a primary). */
export interface ConfigCounters {
  /** a configuration was applied; how long compile (or apply) and swap took */
  configApplied?(durationMs: number): void;
  configRefused(): void;
}

/** A change a primary forwards to its workers, after it applied it itself (see WorkerPool). */
export type ForwardedChange = { kind: 'delta'; delta: SnapshotDelta } | { kind: 'relabel'; version: number };

/** Where a primary forwards each change it applied: its proxy workers. */
export interface ConfigForward {
  publish(snapshot: Snapshot): void;
  /** `current` gives the full config after the change, built only when a worker needs it */
  publishChange(change: ForwardedChange, current: () => Snapshot | null): void;
}

export interface DataPlaneNodeOptions {
  feed: ConfigFeed;
  log: NodeLogger;
  counters?: ConfigCounters;
  /** a primary with proxy workers: every change applied here is forwarded to them */
  forward?: ConfigForward;
  /** what of a snapshot could not be loaded (TLS material, vault references) is logged here (a worker leaves it to its primary) */
  logsProblems?: boolean;
  /**
   * whether a delta that does not apply counts as a refused config (default true); a proxy worker's does not: it asks
   * its primary for the full config, which already applied that delta
   */
  countsRefusedDeltas?: boolean;
  reclaimer?: LoadReclaimer;
  /** the holder the proxy reads (made here when not given) */
  holder?: ConfigHolder;
}

/**
 * A data plane's config, one per process whatever its role (a single process, a primary with workers, a worker): the
 * feed receives, verifies and orders; the node compiles a snapshot or applies a delta, swaps it in (the holder), and
 * a primary forwards it to its workers. A change that does not compile is refused and counted; the old config serves.
 */
export class DataPlaneNode implements ConfigSink {
  readonly holder: ConfigHolder;
  private readonly reclaimer: LoadReclaimer;

  constructor(private readonly options: DataPlaneNodeOptions) {
    this.holder = options.holder ?? new ConfigHolder();
    this.reclaimer = options.reclaimer ?? processReclaimer;
  }

  get feed(): ConfigFeed {
    return this.options.feed;
  }

  /** Serves what the feed holds at hand (the disk cache, the primary's start config): before the proxy ports open. */
  open(): Promise<void> {
    return this.options.feed.open(this);
  }

  follow(): Promise<void> {
    return this.options.feed.follow();
  }

  close(): Promise<void> {
    return this.options.feed.close();
  }

  serving(): { version: number; hash: string } | null {
    return this.holder.loaded ? { version: this.holder.current.version, hash: this.holder.current.hash } : null;
  }

  load(snapshot: Snapshot): void {
    const started = performance.now();
    const compiled = this.refusedCounted(() => compile(snapshot));
    if (this.options.logsProblems !== false) this.logProblems(compiled);
    // what loading left behind is given back once loads pause (see LoadReclaimer)
    this.reclaimer.loaded();
    this.swap(compiled, started);
    this.options.forward?.publish(snapshot);
  }

  applyDelta(delta: SnapshotDelta): void {
    const started = performance.now();
    const next = this.options.countsRefusedDeltas === false ? applyDelta(this.holder.current, delta) : this.refusedCounted(() => applyDelta(this.holder.current, delta));
    this.swap(next, started);
    this.reclaimer.deltaApplied(delta);
    this.options.forward?.publishChange({ kind: 'delta', delta }, () => this.currentSnapshot());
  }

  relabel(version: number): void {
    this.holder.swap({ ...this.holder.current, version });
    this.options.forward?.publishChange({ kind: 'relabel', version }, () => this.currentSnapshot());
  }

  private refusedCounted(make: () => CompiledConfig): CompiledConfig {
    try {
      return make();
    } catch (err) {
      this.options.counters?.configRefused();
      throw err;
    }
  }

  private swap(next: CompiledConfig, started: number): void {
    this.holder.swap(next);
    this.options.counters?.configApplied?.(performance.now() - started);
  }

  private logProblems(compiled: CompiledConfig): void {
    const log = this.options.log;
    for (const p of compiled.tls.problems) log.warn('TLS configuration not loaded', { entity: p.entity, id: p.id, problem: p.message });
    for (const w of compiled.warnings) if (w.message.includes('vault')) log.warn('plugin secret not resolved', { plugin_id: w.plugin_id, problem: w.message });
  }

  /** the full config served now when deltas moved it on (for a worker that starts later, or cannot take a delta) */
  private currentSnapshot(): Snapshot | null {
    const state = this.holder.current.incremental?.state;
    return state ? { ...state.toSnapshot(), version: this.holder.current.version } : null;
  }
}
