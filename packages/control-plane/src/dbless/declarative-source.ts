import { buildSnapshot, newEpoch, type Snapshot } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import { deriveSnapshotKeys, signSnapshotAsync, type ConfigBus, type SnapshotKeys } from '@gatehouse/sync';
import type { EntityKind } from '../service/entity-kind';
import { emptyState, loadDeclarative, type DeclarativeState } from './declarative-state';
import { stateSnapshotConfig } from './state-snapshot';

export interface DeclarativeSourceOptions {
  kinds: EntityKind[];
  plugins: PluginDefinition[];
  bus: ConfigBus;
  secret: string;
  /** the data plane's compile: a configuration that would not load there is refused (throws) */
  check: (snapshot: Snapshot) => void;
}

/** What a publication did: the configuration that is now served. */
export interface Applied {
  state: DeclarativeState;
  version: number;
  hash: string;
}

/**
 * The configuration source of a node without a database: the last declarative document loaded (from the file given
 * at start, or pushed with `POST /config`). Each new document is validated, compiled, signed and published to the
 * bus as a full snapshot, then becomes the state the admin API reads. Versions count up within an epoch started
 * when the node starts, so a data plane's disk cache from an earlier run never wins over it.
 */
export class DeclarativeSource {
  private current: DeclarativeState;
  private version = 0;
  private readonly epoch = newEpoch();
  private readonly keys: SnapshotKeys;
  /** one document at a time: a push waits for the one before it */
  private queue: Promise<unknown> = Promise.resolve();
  private lastPublished: { version: number; hash: string; at: number } | null = null;

  constructor(private readonly opts: DeclarativeSourceOptions) {
    this.current = emptyState(opts.kinds);
    this.keys = deriveSnapshotKeys(opts.secret);
  }

  get state(): DeclarativeState {
    return this.current;
  }

  status(): { version: number | null; hash: string | null; published_at: number | null; epoch: string } {
    return { version: this.lastPublished?.version ?? null, hash: this.lastPublished?.hash ?? null, published_at: this.lastPublished?.at ?? null, epoch: this.epoch };
  }

  /** loads a parsed document and publishes it; rejects with Kong's 400 (DeclarativeError) when it does not load */
  replace(doc: Record<string, unknown>): Promise<Applied> {
    const run = this.queue.then(async () => this.publish(await loadDeclarative(doc, this.opts.kinds)));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** publishes the state held now (the empty configuration before any document) */
  publishCurrent(): Promise<Applied> {
    const run = this.queue.then(() => this.publish(this.current));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async publish(state: DeclarativeState): Promise<Applied> {
    const snapshot = buildSnapshot(this.version + 1, stateSnapshotConfig(state, this.opts.plugins));
    snapshot.epoch = this.epoch;
    this.opts.check(snapshot);
    const signed = await signSnapshotAsync(snapshot, this.keys);
    await this.opts.bus.publish(signed, { replace: true });
    this.version = snapshot.version;
    this.current = state;
    this.lastPublished = { version: snapshot.version, hash: snapshot.hash, at: Math.floor(Date.now() / 1000) };
    return { state, version: snapshot.version, hash: snapshot.hash };
  }
}
