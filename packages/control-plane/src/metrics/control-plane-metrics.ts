import type { ConfigBus } from '@gatehouse/sync';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PublisherStatus } from '../publisher/snapshot-publisher';

export interface ControlPlaneMetricsOptions {
  registry: Registry;
  /** answers whether the database responds (Postgres or PGlite) */
  pingDatabase: () => Promise<boolean>;
  /** where data planes report themselves */
  bus: ConfigBus;
  /** the publisher's state; null before it exists */
  publisher: () => PublisherStatus | null;
}

/** Kong exports a data plane's config hash as a number: the hex digest read as one (a float, as in Kong). */
export function configHashNumber(hash: string): number {
  return /^[0-9a-f]+$/i.test(hash) ? Number(BigInt(`0x${hash}`)) : 0;
}

/**
 * A control plane's metrics in the node's registry: Kong's `kong_datastore_reachable`, `kong_data_plane_last_seen`
 * and `kong_data_plane_config_hash` (read at scrape time), and ours about publication.
 */
export class ControlPlaneMetrics {
  private readonly failures: Counter;
  private readonly duration: Gauge;

  constructor(options: ControlPlaneMetricsOptions) {
    const { registry, bus } = options;
    new Gauge({
      name: 'kong_datastore_reachable',
      help: 'Datastore reachable from Kong, 0 is unreachable',
      registers: [registry],
      async collect() {
        this.set((await options.pingDatabase().catch(() => false)) ? 1 : 0);
      },
    });
    const perDataPlane = (name: string, help: string, value: (p: Awaited<ReturnType<ConfigBus['listDataPlanes']>>[number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['node_id', 'hostname', 'ip'],
        registers: [registry],
        async collect() {
          const planes = await bus.listDataPlanes().catch(() => []);
          this.reset();
          for (const p of planes) this.set({ node_id: p.id, hostname: p.hostname, ip: p.ip }, value(p));
        },
      });
    perDataPlane('kong_data_plane_last_seen', 'Last time data plane contacted control plane', (p) => p.last_seen);
    perDataPlane('kong_data_plane_config_hash', 'Config hash numeric value of the data plane', (p) => configHashNumber(p.config_hash));
    new Gauge({
      name: 'gatehouse_control_plane_config_version',
      help: 'Configuration version last published by this control plane (0 before any)',
      registers: [registry],
      collect() {
        this.set(options.publisher()?.version ?? 0);
      },
    });
    new Gauge({
      name: 'gatehouse_control_plane_published_timestamp_seconds',
      help: 'When this control plane last published a snapshot (epoch seconds, 0 before any)',
      registers: [registry],
      collect() {
        this.set(options.publisher()?.published_at ?? 0);
      },
    });
    new Gauge({
      name: 'gatehouse_control_plane_publication_ok',
      help: '1 when the last publication attempt succeeded, 0 when it failed or none was made',
      registers: [registry],
      collect() {
        const status = options.publisher();
        this.set(status !== null && status.version !== null && status.last_error === null ? 1 : 0);
      },
    });
    this.failures = new Counter({ name: 'gatehouse_publication_failures_total', help: 'Snapshot publications that failed (bus unreachable, or a snapshot that does not build)', registers: [registry] });
    this.duration = new Gauge({ name: 'gatehouse_publication_duration_seconds', help: 'How long the last successful publication took (read, build, check, sign, publish)', registers: [registry] });
  }

  published(durationMs: number): void {
    this.duration.set(durationMs / 1000);
  }

  publicationFailed(): void {
    this.failures.inc();
  }
}
