import { buildSnapshot, canonicalJson, newEpoch, type Snapshot } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import { deriveSnapshotKeys, follows, signSnapshotAsync, type BusSubscription, type ConfigBus, type SnapshotKeys } from '@gatehouse/sync';
import type { EntityKind } from '../service/entity-kind';
import { emptyState, loadDeclarative, type DeclarativeState } from './declarative-state';
import { signDocument, verifyDocument, type DocumentStore } from './document-store';
import { stateSnapshotConfig } from './state-snapshot';

export interface DeclarativeSourceOptions {
  kinds: EntityKind[];
  plugins: PluginDefinition[];
  bus: ConfigBus;
  secret: string;
  /** the data plane's compile: a configuration that would not load there is refused (throws) */
  check: (snapshot: Snapshot) => void;
  /** where the last applied document is kept for a restarted or another control plane (Redis); none in one process */
  documents?: DocumentStore;
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
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
 * when the first document is applied, so a data plane's disk cache from an earlier run never wins over it. With a
 * document store, the document is kept signed beside the snapshot: a restarted control plane resumes from it, and
 * several control planes follow the newest one published by any of them.
 */
export class DeclarativeSource {
  private current: DeclarativeState;
  private version = 0;
  private epoch = newEpoch();
  private readonly keys: SnapshotKeys;
  /** one document at a time: a push waits for the one before it */
  private queue: Promise<unknown> = Promise.resolve();
  private lastPublished: { version: number; hash: string; at: number } | null = null;
  private subscription: BusSubscription | null = null;

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

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** loads a parsed document and publishes it; rejects with Kong's 400 (DeclarativeError) when it does not load */
  replace(doc: Record<string, unknown>): Promise<Applied> {
    return this.serially(async () => {
      const text = this.opts.documents ? canonicalJson(doc) : null;
      const state = await loadDeclarative(doc, this.opts.kinds);
      return this.publish(state, this.version + 1, text);
    });
  }

  /** publishes the state held now (the empty configuration before any document) */
  publishCurrent(): Promise<Applied> {
    return this.serially(() => this.publish(this.current, this.version + 1, null));
  }

  /**
   * Takes up the document the store holds (a restart), publishing it again at its own position; false when the store
   * holds none, or one this cluster secret did not sign (then it is left alone and logged).
   */
  resume(): Promise<boolean> {
    return this.serially(async () => {
      const stored = await this.verifiedStored();
      if (!stored) return false;
      this.epoch = stored.epoch;
      await this.publish(await loadDeclarative(JSON.parse(stored.text) as Record<string, unknown>, this.opts.kinds), stored.version, null);
      return true;
    });
  }

  /** follows publications of other control planes sharing the store: a newer one becomes this node's state too */
  async follow(): Promise<void> {
    this.subscription = await this.opts.bus.subscribe({
      onAnnouncement: (a) => {
        if (follows({ version: a.version, epoch: a.epoch ?? null }, this.position())) void this.adopt();
      },
      onReconnect: () => void this.adopt(),
    });
  }

  async close(): Promise<void> {
    await this.subscription?.close();
  }

  /** where this source stands; null before it published or took up anything */
  private position(): { version: number; epoch: string } | null {
    return this.version === 0 ? null : { version: this.version, epoch: this.epoch };
  }

  private adopt(): Promise<void> {
    return this.serially(async () => {
      const stored = await this.verifiedStored();
      if (!stored || !follows({ version: stored.version, epoch: stored.epoch }, this.position())) return;
      this.current = await loadDeclarative(JSON.parse(stored.text) as Record<string, unknown>, this.opts.kinds);
      this.epoch = stored.epoch;
      this.version = stored.version;
    }).catch((err: unknown) => this.opts.log?.warn('a newer declarative document could not be taken up', { error: err instanceof Error ? err.message : String(err) }));
  }

  private async verifiedStored() {
    const stored = await this.opts.documents?.load();
    if (!stored) return null;
    if (verifyDocument(this.opts.secret, stored)) return stored;
    this.opts.log?.warn('the stored declarative document is not signed with this cluster secret: ignored');
    return null;
  }

  /**
   * The position to publish at: `version` in this source's epoch, unless the bus holds a head that is not behind it
   * (another control plane published meanwhile): then the one right after that head, so every publication follows
   * the one before it and data planes never see two control planes' snapshots as older than each other.
   */
  private async positionAfterHead(version: number): Promise<number> {
    const head = await this.opts.bus.latestAnnouncement().catch(() => null);
    if (!head || follows({ version, epoch: this.epoch }, { version: head.version, epoch: head.epoch ?? null })) return version;
    if (head.epoch) this.epoch = head.epoch;
    return head.version + 1;
  }

  private async publish(state: DeclarativeState, wanted: number, text: string | null): Promise<Applied> {
    const version = await this.positionAfterHead(wanted);
    const snapshot = buildSnapshot(version, stateSnapshotConfig(state, this.opts.plugins));
    snapshot.epoch = this.epoch;
    this.opts.check(snapshot);
    const signed = await signSnapshotAsync(snapshot, this.keys);
    // the document first: a control plane that sees the snapshot's announcement finds the document that made it
    if (text !== null) await this.opts.documents!.save(signDocument(this.opts.secret, this.epoch, version, text));
    await this.opts.bus.publish(signed, { replace: true });
    this.version = version;
    this.current = state;
    this.lastPublished = { version, hash: snapshot.hash, at: Math.floor(Date.now() / 1000) };
    return { state, version, hash: snapshot.hash };
  }
}
