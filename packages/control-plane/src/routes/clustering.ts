import type { ConfigBus } from '@gatehouse/sync';
import type { AdminContext } from '../http/context';

/**
 * The control plane's view of its data planes, fed by their heartbeats through the bus:
 * GET /clustering/data-planes (Kong's shape) and the deprecated GET /clustering/status.
 */
export function clusteringExtension(bus: ConfigBus): (ctx: Pick<AdminContext, 'resources'>) => void {
  return (ctx) => {
    ctx.resources.add('/clustering/data-planes', {
      get: async (_req, res) => {
        const planes = await bus.listDataPlanes();
        const data = planes.map((p) => ({
          id: p.id,
          hostname: p.hostname,
          ip: p.ip,
          version: p.version,
          sync_status: p.sync_status,
          config_hash: p.config_hash,
          config_version: p.config_version,
          last_seen: p.last_seen,
          updated_at: p.last_seen,
          ttl: p.ttl,
          labels: {},
        }));
        res.status(200).json({ data, next: null });
      },
    });
    ctx.resources.add('/clustering/status', {
      get: async (_req, res) => {
        const planes = await bus.listDataPlanes();
        const body: Record<string, unknown> = {};
        for (const p of planes) body[p.id] = { config_hash: p.config_hash, hostname: p.hostname, ip: p.ip, last_seen: p.last_seen };
        res.setHeader('Deprecation', 'true');
        res.status(200).json(body);
      },
    });
  };
}
