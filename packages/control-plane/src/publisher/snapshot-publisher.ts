import { buildSnapshot, type Snapshot } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { ConfigBus } from '@gatehouse/sync';
import { signSnapshot } from '@gatehouse/sync';
import type { Keyring } from '../keys/keyring';
import type { ConfigStore } from '../store/config-store';
import { readSnapshotConfig } from './read-config';

export interface PublisherLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface SnapshotPublisherOptions {
  store: ConfigStore;
  bus: ConfigBus;
  secret: string;
  plugins: PluginDefinition[];
  keyring?: Keyring | null;
  /** the data plane's compile: a snapshot that would not load there is never published (throws to refuse) */
  check: (snapshot: Snapshot) => void;
  log: PublisherLogger;
  /** how often the publisher compares what the bus holds with the database (catches a restarted, empty Redis) */
  reconcileIntervalMs?: number;
  /** told after each successful publication, with how long it took (metrics) */
  onPublished?: (snapshot: Snapshot, durationMs: number) => void;
  /** told after each failed publication (metrics) */
  onFailed?: (message: string) => void;
}

export interface PublisherStatus {
  version: number | null;
  hash: string | null;
  published_at: number | null;
  last_error: string | null;
}

/**
 * Builds, checks, signs and publishes snapshots. Triggers coalesce: while one publication runs, any number of new
 * triggers cause exactly one more, which reads the latest committed state. Failures (bus down) are retried with
 * backoff, and a periodic reconcile republishes when the bus's latest differs from the database.
 */
export class SnapshotPublisher {
  private inFlight: Promise<void> | null = null;
  private pending = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private reconcileTimer: NodeJS.Timeout | null = null;
  private retryDelayMs = 250;
  private stopped = false;
  private last: PublisherStatus = { version: null, hash: null, published_at: null, last_error: null };

  constructor(private readonly opts: SnapshotPublisherOptions) {}

  status(): PublisherStatus {
    return { ...this.last };
  }

  /** publishes the current state at once and keeps it published */
  async start(): Promise<void> {
    await this.trigger();
    const every = this.opts.reconcileIntervalMs ?? 5000;
    this.reconcileTimer = setInterval(() => void this.reconcile(), every);
    this.reconcileTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.inFlight?.catch(() => {});
  }

  /** asks for a publication of the latest committed config; resolves when one that started after the call is done */
  trigger(): Promise<void> {
    if (this.inFlight) {
      this.pending = true;
      return this.inFlight;
    }
    this.inFlight = (async () => {
      do {
        this.pending = false;
        await this.publishOnce();
      } while (this.pending && !this.stopped);
    })().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async publishOnce(): Promise<void> {
    const started = performance.now();
    let snapshot: Snapshot;
    try {
      const { version, config } = await readSnapshotConfig(this.opts.store, { plugins: this.opts.plugins, keyring: this.opts.keyring });
      snapshot = buildSnapshot(version, config);
      this.opts.check(snapshot);
    } catch (err) {
      this.fail('snapshot not published: it does not build or load', err, false);
      return;
    }
    try {
      await this.opts.bus.publish(signSnapshot(snapshot, this.opts.secret));
      this.last = { version: snapshot.version, hash: snapshot.hash, published_at: Math.floor(Date.now() / 1000), last_error: null };
      this.retryDelayMs = 250;
      this.opts.onPublished?.(snapshot, performance.now() - started);
    } catch (err) {
      this.fail(`snapshot ${snapshot.version} not published: the bus is unreachable; retrying`, err, true);
    }
  }

  private fail(message: string, err: unknown, retry: boolean): void {
    const reason = err instanceof Error ? err.message : String(err);
    this.last = { ...this.last, last_error: `${message}: ${reason}` };
    this.opts.log.error(message, { error: reason });
    this.opts.onFailed?.(message);
    if (!retry || this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.trigger();
    }, this.retryDelayMs);
    this.retryTimer.unref();
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 5000);
  }

  private async reconcile(): Promise<void> {
    if (this.stopped || this.inFlight) return;
    try {
      const [head, version] = await Promise.all([this.opts.bus.latestAnnouncement(), this.opts.store.version()]);
      if (!head || head.version < version || (this.last.hash !== null && head.version === this.last.version && head.hash !== this.last.hash)) {
        await this.trigger();
      }
    } catch {
      // bus or database unreachable: the next round tries again
    }
  }
}
