import type { ConfigBus } from '@gatehouse/sync';
import { sql } from 'kysely';
import type { ListedDataPlane } from '@gatehouse/sync';
import type { AdminContext } from '../http/context';

/** Names of the plugins the configuration uses. */
/** the plugin names the configuration uses; none known without a database (a DB-less control plane) */
async function configuredPlugins(ctx: Pick<AdminContext, 'resources'> & Partial<Pick<AdminContext, 'store'>>): Promise<string[]> {
  if (ctx.store === undefined) return [];
  const { rows } = await sql<{ name: string }>`select distinct name from plugins`.execute(ctx.store.db).catch(() => ({ rows: [] as Array<{ name: string }> }));
  return rows.map((r) => r.name);
}

/**
 * Kong's sync_status: `plugin_set_incompatible` when the configuration uses a plugin the data plane does not have
 * (it keeps refusing that configuration), else what the data plane reports (`normal`, or `unknown` before its first).
 */
export function syncStatus(plane: ListedDataPlane, configured: readonly string[]): string {
  if (plane.plugins && configured.some((name) => !plane.plugins!.includes(name))) return 'plugin_set_incompatible';
  return plane.sync_status;
}

/**
 * The control plane's view of its data planes, fed by their heartbeats through the bus:
 * GET /clustering/data-planes (Kong's shape) and the deprecated GET /clustering/status.
 */
export function clusteringExtension(bus: ConfigBus): (ctx: Pick<AdminContext, 'resources'> & Partial<Pick<AdminContext, 'store'>>) => void {
  return (ctx) => {
    ctx.resources.add('/clustering/data-planes', {
      get: async (_req, res) => {
        const planes = await bus.listDataPlanes();
        const configured = await configuredPlugins(ctx);
        const data = planes.map((p) => ({
          id: p.id,
          hostname: p.hostname,
          ip: p.ip,
          version: p.version,
          sync_status: syncStatus(p, configured),
          config_hash: p.config_hash,
          config_version: p.config_version,
          last_seen: p.last_seen,
          updated_at: p.last_seen,
          ttl: p.ttl,
          labels: p.labels ?? {},
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
