import type { ConfigBus, DataPlaneReport, SyncLogger } from '@gatehouse/sync';

/**
 * A data plane's report to the control plane (`/clustering/data-planes`): sent on a period and after every config
 * change. A failure is said once, and its end once; the serving config never depends on it.
 */
export class Heartbeat {
  private failing = false;

  constructor(
    private readonly bus: ConfigBus,
    private readonly report: () => DataPlaneReport,
    private readonly logger: SyncLogger,
  ) {}

  async beat(): Promise<void> {
    try {
      await this.bus.reportDataPlane(this.report());
      if (this.failing) this.logger.info('data plane heartbeat delivered again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn('data plane heartbeat failed', { error: (error as Error).message });
      this.failing = true;
    }
  }
}

/** Tasks run on a period, never two runs of one task at once; `stop()` clears them all. */
export class PeriodicTasks {
  private timers: NodeJS.Timeout[] = [];

  every(ms: number, task: () => Promise<void>): void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      task().finally(() => (running = false));
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }
}
