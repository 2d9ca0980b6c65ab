import type { Registry } from 'prom-client';
import type { Observation } from '../balancer/health';
import type { BalancerRegistry } from '../balancer/registry';
import type { ServerStats } from '../server';
import { isGatehouseMessage, type ConfigMessage, type HealthMessage, type LogLevelMessage, type PassiveMessage, type StartMessage, type ToPrimary, type ToWorker } from './messages';
import { SharedCallClient } from './shared-calls';
import { remoteNodeStores, type NodeStores } from './shared-stores';

export interface PrimaryLinkHandlers {
  /** stop accepting, finish in flight within `graceMs`, then exit */
  stop(graceMs: number): void;
  reopenLog(): void;
}

/** What the worker's counts are read from when the primary asks. */
export interface WorkerCounters {
  stats(): ServerStats;
  registry: Registry;
}

/**
 * A proxy worker's side of the IPC channel to its primary: the config it serves, the node's health, its calls to the
 * node's shared stores (`stores`), its passive health observations, and its counts when the primary asks.
 */
export class PrimaryLink {
  readonly calls: SharedCallClient;
  private passiveQueue: PassiveMessage['observations'] = [];
  private passiveScheduled = false;
  private balancers: BalancerRegistry | null = null;
  private counters: WorkerCounters | null = null;
  private handlers: PrimaryLinkHandlers | null = null;
  /** where the configs the primary sends go (see PrimaryFeed) */
  private configs: ((message: ConfigMessage) => void) | null = null;
  private lastHealth: HealthMessage | null = null;
  /** a config that arrived before anything took configs; applied when something does */
  private pendingConfig: ConfigMessage | null = null;
  private readonly started: Promise<StartMessage>;
  /** applies a run-time log level the primary sends (set before `waitForStart`: the start message may carry one) */
  private logLevel: ((message: LogLevelMessage) => void) | null = null;

  constructor(private readonly channel: NodeJS.Process = process) {
    if (!channel.send) throw new Error('a proxy worker runs under a primary (node:cluster)');
    this.calls = new SharedCallClient((batch) => this.send(batch));
    let onStart!: (message: StartMessage) => void;
    this.started = new Promise((resolve) => (onStart = resolve));
    channel.on('message', (message: unknown) => {
      if (!isGatehouseMessage(message)) return;
      const m = message as ToWorker;
      if (m.gatehouse === 'start') {
        this.lastHealth = m.health;
        if (m.logLevel) this.logLevel?.(m.logLevel);
        return onStart(m);
      }
      this.receive(m);
    });
    // the primary is gone (crashed or killed): a worker never outlives it
    channel.on('disconnect', () => {
      this.calls.close();
      process.exit(0);
    });
  }

  private send(message: ToPrimary): void {
    this.channel.send!(message);
  }

  /** Where the node's run-time log level changes go (the start message's, then each change). */
  onLogLevel(apply: (message: LogLevelMessage) => void): void {
    this.logLevel = apply;
  }

  /** the first message: the config to serve before the ports open, and the node's health */
  waitForStart(): Promise<StartMessage> {
    this.send({ gatehouse: 'hello' });
    return this.started;
  }

  /** The node's shared stores, reached through the primary. */
  stores(withTokens: boolean): NodeStores {
    return remoteNodeStores(this.calls, withTokens);
  }

  /** Where the balancers send passive observations (`BalancerRegistryOptions.passiveSink`). */
  readonly passiveSink = (upstreamId: string, addressKey: string, observation: Observation): void => {
    // the same observation of the same address again (a healthy stream of successes): counted, not repeated
    const last = this.passiveQueue[this.passiveQueue.length - 1];
    if (last !== undefined && last[2] === observation && last[1] === addressKey && last[0] === upstreamId) last[3]++;
    else this.passiveQueue.push([upstreamId, addressKey, observation, 1]);
    if (this.passiveScheduled) return;
    this.passiveScheduled = true;
    setImmediate(() => {
      this.passiveScheduled = false;
      const observations = this.passiveQueue;
      this.passiveQueue = [];
      this.send({ gatehouse: 'passive', observations });
    });
  };

  /** Wires the served proxy: its balancers mirror the node's health, its counts answer the primary. */
  attach(balancers: BalancerRegistry, counters: WorkerCounters, handlers: PrimaryLinkHandlers): void {
    this.balancers = balancers;
    this.counters = counters;
    this.handlers = handlers;
    if (this.lastHealth) balancers.mirrorHealth(this.lastHealth.states);
  }

  /** Where the configs the primary sends after the start message go. */
  onConfig(apply: (message: ConfigMessage) => void): void {
    this.configs = apply;
    const pending = this.pendingConfig;
    this.pendingConfig = null;
    if (pending) apply(pending);
  }

  /** This worker's config could not take a delta: the primary sends its current full snapshot. */
  resync(): void {
    this.send({ gatehouse: 'resync' });
  }

  /** The ports are open. */
  listening(port: number, tlsPort: number | null): void {
    this.send({ gatehouse: 'listening', port, tlsPort });
  }

  private receive(message: ToWorker): void {
    switch (message.gatehouse) {
      case 'replies':
        return this.calls.receive(message);
      case 'config':
        if (this.configs) return this.configs(message);
        this.pendingConfig = message;
        return;
      case 'health':
        this.lastHealth = message;
        return this.balancers?.mirrorHealth(message.states);
      case 'report?': {
        const counters = this.counters;
        if (!counters) return;
        const id = message.id;
        void counters.registry.getMetricsAsJSON().then((metrics) => this.send({ gatehouse: 'report', id, stats: counters.stats(), metrics }));
        return;
      }
      case 'stop':
        if (this.handlers) return this.handlers.stop(message.graceMs);
        process.exit(0);
        return;
      case 'reopen-log':
        return this.handlers?.reopenLog();
      case 'log-level':
        return this.logLevel?.(message);
    }
  }
}
