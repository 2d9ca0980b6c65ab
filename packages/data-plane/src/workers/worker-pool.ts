import cluster, { type Worker } from 'node:cluster';
import type { Snapshot } from '@gatehouse/core';
import type { BalancerRegistry } from '../balancer/registry';
import type { ConfigForward, ForwardedChange } from '../node/data-plane-node';
import { isGatehouseMessage, type ConfigMessage, type HealthMessage, type ToPrimary, type ToWorker } from './messages';
import { RetiredWorkers, type RetiredCounts, type WorkerReport } from './retired-workers';

export type { RetiredCounts, WorkerReport } from './retired-workers';
import { HeldLogLevel } from './held-log-level';
import type { SharedCallServer } from './shared-calls';

export interface WorkerPoolLogger {
  info(message: string, detail?: Record<string, unknown>): void;
  warn(message: string, detail?: Record<string, unknown>): void;
  error(message: string, detail?: Record<string, unknown>): void;
}

export interface WorkerPoolOptions {
  /** how many proxy workers (GATEHOUSE_WORKERS) */
  size: number;
  /** what the workers call: the node's shared stores */
  shared: SharedCallServer;
  /** the node's balancers, kept by the primary: active checks run here, passive results are counted here */
  balancers: BalancerRegistry;
  log: WorkerPoolLogger;
  /** extra environment of every worker (the CLI marks its workers with it) */
  env?: Record<string, string>;
  /** how long a worker may take to open its ports (ms, default 30000) */
  startTimeoutMs?: number;
}

interface Member {
  worker: Worker;
  startedAt: number;
  listening: boolean;
  last: WorkerReport | null; // what it reported last: kept when it exits, so the node's counters do not go back
}

const RESTART_DELAY_MAX_MS = 5000;

/**
 * The primary's proxy workers (node:cluster: the workers share the listening ports). The primary holds the sync and
 * forwards each verified config to every worker; it serves the node's shared state (`SharedCallServer`), counts
 * passive health and sends the node's health back, and replaces a worker that exits until `stop()`.
 */
export class WorkerPool implements ConfigForward {
  private readonly members = new Map<number, Member>();
  private config: ConfigMessage | null = null;
  /** the primary's full config when it moved on by deltas since the last snapshot */
  private currentSnapshot: (() => Snapshot | null) | null = null;
  private stopping = false;
  private readonly logLevel = new HeldLogLevel();
  private reportId = 0;
  private readonly reportsWaiting = new Map<number, { replies: Map<number, WorkerReport>; expected: Set<number>; done(): void }>();
  private healthScheduled = false;
  private readonly retiredWorkers = new RetiredWorkers();
  private restartDelayMs = 0;
  private readonly stopHealth: () => void;
  /** workers started since the pool began, replacements included */
  started = 0;
  /** the proxy ports the workers share (known once the first one listens) */
  ports: { port: number; tlsPort: number | null } | null = null;

  constructor(private readonly options: WorkerPoolOptions) {
    // messages travel as JSON (Node's default): with the batches a loaded worker sends (about ten calls each) it
    // costs less than the `advanced` (structured clone) serialization; proxy-cache bodies cross it in base64
    cluster.setupPrimary({ serialization: 'json' });
    this.stopHealth = options.balancers.onChange(() => this.scheduleHealth());
  }

  /** counts of the workers that exited (see RetiredCounts) */
  get retired(): RetiredCounts {
    return this.retiredWorkers.counts;
  }

  /** Starts every worker; resolves once all of them listen. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.size }, () => this.fork()));
  }

  /** whether a worker listens, so the shared proxy ports accept connections */
  get listening(): boolean {
    return [...this.members.values()].some((m) => m.listening);
  }

  /** pids of the workers alive now */
  get pids(): number[] {
    return [...this.members.values()].map((m) => m.worker.process.pid!).filter((pid) => pid !== undefined);
  }

  private fork(): Promise<void> {
    const worker = cluster.fork({ ...this.options.env });
    const member: Member = { worker, startedAt: Date.now(), listening: false, last: null };
    this.members.set(worker.id, member);
    this.started++;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`proxy worker ${worker.process.pid} did not open its ports within ${this.options.startTimeoutMs ?? 30_000} ms`)), this.options.startTimeoutMs ?? 30_000);
      timer.unref();
      worker.on('message', (message: unknown) => {
        if (!isGatehouseMessage(message)) return;
        const m = message as ToPrimary;
        if (m.gatehouse === 'listening') {
          member.listening = true;
          this.ports ??= { port: m.port, tlsPort: m.tlsPort };
          clearTimeout(timer);
          resolve();
          return;
        }
        this.receive(worker, m);
      });
      worker.once('exit', (code, signal) => {
        clearTimeout(timer);
        this.members.delete(worker.id);
        if (member.last) this.retiredWorkers.add(member.last);
        for (const waiting of this.reportsWaiting.values()) {
          // its counts are among the retired now: not in a report still being gathered as well
          waiting.expected.delete(worker.id);
          waiting.replies.delete(worker.id);
          if (waiting.replies.size >= waiting.expected.size) waiting.done();
        }
        if (!member.listening) reject(new Error(`proxy worker ${worker.process.pid} exited before it listened (code ${code}, signal ${signal})`));
        if (this.stopping) return;
        this.options.log.warn('proxy worker exited; starting a replacement', { pid: worker.process.pid, code, signal });
        this.replace(member);
      });
    });
  }

  /** A worker that lived long is replaced at once; one that keeps dying young is replaced ever more slowly. */
  private replace(dead: Member): void {
    const young = Date.now() - dead.startedAt < 1000;
    this.restartDelayMs = young ? Math.min(RESTART_DELAY_MAX_MS, Math.max(100, this.restartDelayMs * 2)) : 0;
    const timer = setTimeout(() => {
      if (this.stopping) return;
      this.fork().then(
        (): void => undefined,
        (err: unknown) => this.options.log.error('proxy worker replacement failed', { error: err instanceof Error ? err.message : String(err) }),
      );
    }, this.restartDelayMs);
    timer.unref();
  }

  private receive(worker: Worker, message: ToPrimary): void {
    switch (message.gatehouse) {
      case 'hello':
        return this.send(worker, { gatehouse: 'start', config: this.startConfig(), health: this.health(), logLevel: this.logLevel.now() });
      case 'resync': {
        const config = this.startConfig();
        if (config) this.send(worker, config);
        return;
      }
      case 'calls':
        return this.options.shared.handle(message, (replies) => this.send(worker, replies));
      case 'passive': {
        const registry = this.options.balancers;
        for (const [upstreamId, key, observation, times] of message.observations) {
          const balancer = registry.getById(upstreamId);
          const address = balancer?.addresses.find((a) => a.key === key);
          // thresholds go up to 255 (Kong's schema): more of the same in a row changes nothing
          if (balancer && address) for (let i = 0; i < Math.min(times, 256); i++) registry.passive(balancer, address, observation);
        }
        return;
      }
      case 'report': {
        const waiting = this.reportsWaiting.get(message.id);
        if (!waiting) return;
        const report = { pid: worker.process.pid ?? 0, stats: message.stats, metrics: message.metrics };
        const member = this.members.get(worker.id);
        if (member) member.last = report;
        waiting.replies.set(worker.id, report);
        if (waiting.replies.size >= waiting.expected.size) waiting.done();
        return;
      }
    }
  }

  private send(worker: Worker, message: ToWorker): void {
    if (!worker.isConnected()) return;
    try {
      worker.send(message);
    } catch (err) {
      this.options.log.warn('cannot reach a proxy worker', { pid: worker.process.pid, error: err instanceof Error ? err.message : String(err) });
    }
  }

  private broadcast(message: ToWorker): void {
    for (const member of this.members.values()) this.send(member.worker, message);
  }

  /** Forwards a verified snapshot to every worker (and keeps it for the workers that start later). */
  publish(snapshot: Snapshot): void {
    this.config = { gatehouse: 'config', kind: 'snapshot', snapshot };
    this.currentSnapshot = null;
    this.broadcast(this.config);
  }

  /**
   * Forwards a verified delta the primary applied, or a relabelled version. `current` gives the primary's full config
   * after it: a worker that starts later, or cannot take the delta, is sent that (built only when one asks).
   */
  publishChange(change: ForwardedChange, current: () => Snapshot | null): void {
    this.config = null;
    this.currentSnapshot = current;
    this.broadcast({ gatehouse: 'config', ...change });
  }

  /** the full config to start a worker with */
  private startConfig(): ConfigMessage | null {
    if (!this.config && this.currentSnapshot) {
      const snapshot = this.currentSnapshot();
      if (snapshot) this.config = { gatehouse: 'config', kind: 'snapshot', snapshot };
    }
    return this.config;
  }

  private health(): HealthMessage {
    return { gatehouse: 'health', states: this.options.balancers.healthStates() };
  }

  private scheduleHealth(): void {
    if (this.healthScheduled) return;
    this.healthScheduled = true;
    setImmediate(() => {
      this.healthScheduled = false;
      this.broadcast(this.health());
    });
  }

  /** Every listening worker's counts and metrics; a worker that does not answer within `timeoutMs` is left out. */
  reports(timeoutMs = 2000): Promise<WorkerReport[]> {
    const id = ++this.reportId;
    const expected = new Set([...this.members.values()].filter((m) => m.listening).map((m) => m.worker.id));
    return new Promise((resolve) => {
      const replies = new Map<number, WorkerReport>();
      const done = () => {
        clearTimeout(timer);
        this.reportsWaiting.delete(id);
        resolve([...replies.values()]);
      };
      const timer = setTimeout(done, timeoutMs);
      this.reportsWaiting.set(id, { replies, expected, done });
      if (expected.size === 0) return done();
      for (const workerId of expected) this.send(this.members.get(workerId)!.worker, { gatehouse: 'report?', id });
    });
  }

  /** The node's log level changed at run time: every worker takes it, a worker started while it holds too. */
  setLogLevel = (level: string, timeoutSeconds: number): void => this.broadcast(this.logLevel.set(level, timeoutSeconds));

  /** The access log file is opened again by every worker. */
  reopenLogs(): void {
    this.broadcast({ gatehouse: 'reopen-log' });
  }

  /** Stops every worker: each stops accepting and gets `graceMs` for what is in flight; stragglers are killed. */
  async stop(graceMs = 2000): Promise<void> {
    this.stopping = true;
    this.stopHealth();
    const exits = [...this.members.values()].map(
      ({ worker }) =>
        new Promise<void>((resolve) => {
          if (worker.isDead()) return resolve();
          worker.once('exit', () => resolve());
          this.send(worker, { gatehouse: 'stop', graceMs });
          const timer = setTimeout(() => worker.process.kill('SIGKILL'), graceMs + 3000);
          timer.unref();
        }),
    );
    await Promise.all(exits);
  }
}
