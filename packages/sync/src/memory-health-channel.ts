import type { BusSubscription } from './bus';
import type { DataPlaneHealthReport, HealthChannel, ManualHealthCommand } from './health-channel';

/** The in-process health channel of embedded mode: same semantics as Redis's, deliveries asynchronous. */
export class MemoryHealthChannel implements HealthChannel {
  private readonly reports = new Map<string, DataPlaneHealthReport>();
  private readonly handlers = new Set<(command: ManualHealthCommand) => void>();

  constructor(private readonly now: () => number = Date.now) {}

  async report(report: DataPlaneHealthReport): Promise<void> {
    this.reports.set(report.data_plane_id, structuredClone(report));
  }

  async list(maxAgeSeconds: number): Promise<DataPlaneHealthReport[]> {
    const cutoff = Math.floor(this.now() / 1000) - maxAgeSeconds;
    return [...this.reports.values()].filter((r) => r.at >= cutoff).sort((a, b) => b.at - a.at).map((r) => structuredClone(r));
  }

  async publishManual(command: ManualHealthCommand): Promise<void> {
    for (const handler of this.handlers) {
      const copy = { ...command };
      setImmediate(() => handler(copy));
    }
  }

  async subscribeManual(handler: (command: ManualHealthCommand) => void): Promise<BusSubscription> {
    this.handlers.add(handler);
    return { close: async () => void this.handlers.delete(handler) };
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
