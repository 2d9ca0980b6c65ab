import type { BusSubscription, HealthChannel } from '@gatehouse/sync';
import type { BalancerRegistry } from './registry';

export interface HealthReporterOptions {
  registry: BalancerRegistry;
  channel: HealthChannel;
  identity: { id: string; hostname: string };
  configVersion: () => number;
  /** a report at least this often (ms), so the control plane sees the data plane as live */
  intervalMs?: number;
  /** changes closer together than this are reported once (ms) */
  debounceMs?: number;
  log?: { warn(message: string, detail?: Record<string, unknown>): void };
}

/**
 * Connects a data plane's balancers to the health channel: reports target health on every change (debounced) and
 * periodically, and applies the manual health commands the control plane broadcasts.
 */
export class HealthReporter {
  private subscription: BusSubscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private pending: NodeJS.Timeout | null = null;
  private stopChanges: (() => void) | null = null;
  private stopped = false;
  /** the last report failed: say so once per outage, not every period */
  private failing = false;

  constructor(private readonly options: HealthReporterOptions) {}

  async start(): Promise<void> {
    const { registry, channel } = this.options;
    this.subscription = await channel.subscribeManual((command) => registry.applyManual(command));
    this.stopChanges = registry.onChange(() => this.soon());
    this.timer = setInterval(() => void this.send(), this.options.intervalMs ?? 5000);
    this.timer.unref();
    await this.send();
  }

  private soon(): void {
    if (this.pending !== null || this.stopped) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      void this.send();
    }, this.options.debounceMs ?? 100);
    this.pending.unref();
  }

  /** sends the current health now; a failure (Redis down) waits for the next change or period */
  async send(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.options.channel.report({
        data_plane_id: this.options.identity.id,
        hostname: this.options.identity.hostname,
        at: Math.floor(Date.now() / 1000),
        config_version: this.options.configVersion(),
        upstreams: this.options.registry.healthReport(),
      });
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.options.log?.warn('target health report failed; retrying', { error: (error as Error).message });
      this.failing = true;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.pending !== null) clearTimeout(this.pending);
    this.stopChanges?.();
    await this.subscription?.close();
  }
}
