import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { AdminContext } from '../http/context';
import { findDanglingAnonymous } from '../store/dangling-references';

export interface NodeInfo {
  /** reported as `version`; Kong tools gate features on it */
  version: string;
  nodeId: string;
  hostname?: string;
  /** Kong's role names: traditional | control_plane | data_plane */
  role: string;
  adminListen: string[];
  /** Kong's `proxy_listen` entries: `ip:port`, then flags (`0.0.0.0:8443 http2 ssl` for a TLS listener) */
  proxyListen: string[];
  /** counters of the admin server (filled by startAdminServer) */
  counters: ServerCounters;
  /** Kong `configuration` keys of GET / beyond the built-in ones; they win over them */
  configuration?: Record<string, unknown>;
  /** extra fields for GET /status (e.g. configuration_hash) */
  statusExtras?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
}

export interface ServerCounters {
  connections_active: number;
  connections_accepted: number;
  connections_handled: number;
  total_requests: number;
}

export function newCounters(): ServerCounters {
  return { connections_active: 0, connections_accepted: 0, connections_handled: 0, total_requests: 0 };
}

/**
 * One of Kong's `*_listeners` entries from a listen spec as Kong writes it, `ip:port` then flags (`ssl`, `http2`, …):
 * `0.0.0.0:8443 http2 ssl` → `{ip: '0.0.0.0', port: 8443, ssl: true, http2: true, …, listener: '0.0.0.0:8443 http2 ssl'}`.
 */
export function listener(spec: string): Record<string, unknown> {
  const [address = '', ...flags] = spec.trim().split(/\s+/);
  const at = address.lastIndexOf(':');
  const ip = at > 0 ? address.slice(0, at) : '0.0.0.0';
  const port = Number(at >= 0 ? address.slice(at + 1) : address);
  const has = (flag: string) => flags.includes(flag);
  const backlog = flags.find((f) => f.startsWith('backlog='));
  return {
    ip,
    port,
    ssl: has('ssl'),
    http2: has('http2'),
    proxy_protocol: has('proxy_protocol'),
    deferred: has('deferred'),
    reuseport: has('reuseport'),
    backlog: backlog === undefined ? null : Number(backlog.slice('backlog='.length)),
    listener: [`${ip}:${port}`, ...flags].join(' '),
  };
}

/**
 * Kong's node information (GET /, read by Kong Manager and decK). `storage` names the database; the node's own
 * configuration keys win over it.
 */
export function nodeInformation(node: NodeInfo, plugins: readonly PluginDefinition[], enabled: string[], storage: Record<string, unknown>) {
  const available: Record<string, { version: string; priority: number }> = {};
  for (const p of [...plugins].sort((a, b) => a.name.localeCompare(b.name))) available[p.name] = { version: p.version, priority: p.priority };
  const configuration: Record<string, unknown> = {
    ...storage,
    role: node.role,
    admin_listen: node.adminListen,
    proxy_listen: node.proxyListen,
    proxy_listeners: node.proxyListen.map(listener),
    admin_listeners: node.adminListen.map(listener),
    plugins: ['bundled'],
    loaded_plugins: Object.fromEntries(plugins.map((p) => [p.name, true])),
    ...node.configuration,
  };
  return {
    version: node.version,
    edition: 'community',
    hostname: node.hostname ?? hostname(),
    node_id: node.nodeId,
    tagline: 'Welcome to gatehouse',
    timers: { running: 0, pending: 0 },
    pids: { master: process.pid, workers: [process.pid] },
    configuration,
    plugins: { available_on_server: available, enabled_in_cluster: enabled },
  };
}

/** GET /status's `server` block: the admin server's connections and requests, as nginx's stub status counts them. */
export function serverStatus(counters: ServerCounters) {
  return {
    connections_active: counters.connections_active,
    connections_reading: 0,
    connections_writing: counters.connections_active > 0 ? 1 : 0,
    connections_waiting: Math.max(0, counters.connections_active - 1),
    connections_accepted: counters.connections_accepted,
    connections_handled: counters.connections_handled,
    total_requests: counters.total_requests,
  };
}

/** GET / and GET /status of a node over a database. */
export function mountRootRoutes(ctx: AdminContext, node: NodeInfo): void {
  const { resources, store, plugins } = ctx;

  resources.add('/', {
    get: async (_req, res) => {
      const { rows } = await sql<{ name: string }>`select distinct name from plugins order by name`
        .execute(store.db)
        .catch(() => ({ rows: [] as Array<{ name: string }> }));
      const storage = { database: 'postgres', database_backend: store.database.kind };
      res.json(nodeInformation(node, plugins, rows.map((r) => r.name), storage));
    },
  });

  resources.add('/status', {
    get: async (_req, res) => {
      const reachable = await store.database.ping();
      const version = reachable ? await store.version().catch(() => null) : null;
      const warnings = reachable ? await findDanglingAnonymous(store.db).catch(() => []) : [];
      const extras = node.statusExtras ? await node.statusExtras() : {};
      res.json({ database: { reachable }, config_version: version, server: serverStatus(node.counters), warnings, ...extras });
    },
  });
}
