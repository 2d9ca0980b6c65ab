import { hostname } from 'node:os';
import { HttpError, kongEntitySchemaOf, kongPluginSchemaOf } from '@gatehouse/core';
import { pluginProtocolsSchema, type PluginDefinition } from '@gatehouse/plugins';
import { param } from '../http/context';
import type { ResourceRegistry } from '../http/resources';
import { checkEntity } from '../declarative/apply';
import { schemaViolation } from '@gatehouse/core';
import { listener, type NodeInfo } from '../routes/root';
import type { EntityKind } from '../service/entity-kind';
import type { DeclarativeSource } from './declarative-source';

/** GET / and GET /status of a node without a database: `database: off`, and the loaded configuration's hash. */
export function mountDeclarativeNodeRoutes(resources: ResourceRegistry, node: NodeInfo, plugins: PluginDefinition[], source: DeclarativeSource): void {
  resources.add('/', {
    get: (_req, res) => {
      const available: Record<string, { version: string; priority: number }> = {};
      for (const p of [...plugins].sort((a, b) => a.name.localeCompare(b.name))) available[p.name] = { version: p.version, priority: p.priority };
      const enabled = [...new Set((source.state.entities.get('plugins') ?? []).map((p) => String(p.name)))].sort();
      res.json({
        version: node.version,
        edition: 'community',
        hostname: node.hostname ?? hostname(),
        node_id: node.nodeId,
        tagline: 'Welcome to gatehouse',
        timers: { running: 0, pending: 0 },
        pids: { master: process.pid, workers: [process.pid] },
        configuration: {
          role: node.role,
          admin_listen: node.adminListen,
          proxy_listen: node.proxyListen,
          proxy_listeners: node.proxyListen.map(listener),
          admin_listeners: node.adminListen.map(listener),
          plugins: ['bundled'],
          loaded_plugins: Object.fromEntries(plugins.map((p) => [p.name, true])),
          // Kong's other configuration keys (listeners, router flavour, …); `database` stays `off`
          ...node.configuration,
          database: 'off',
        },
        plugins: { available_on_server: available, enabled_in_cluster: enabled },
      });
    },
  });
  resources.add('/status', {
    get: async (_req, res) => {
      const extras = node.statusExtras ? await node.statusExtras() : {};
      const c = node.counters;
      res.json({
        // Kong leaves `database` out without one, and reports the loaded configuration's hash instead
        configuration_hash: source.state.hash,
        config_version: source.status().version,
        server: {
          connections_active: c.connections_active,
          connections_reading: 0,
          connections_writing: c.connections_active > 0 ? 1 : 0,
          connections_waiting: Math.max(0, c.connections_active - 1),
          connections_accepted: c.connections_accepted,
          connections_handled: c.connections_handled,
          total_requests: c.total_requests,
        },
        ...extras,
      });
    },
  });
}

/** Kong's schema documents and their dry-run checks, which need no database. */
export function mountDeclarativeSchemaRoutes(resources: ResourceRegistry, kinds: EntityKind[], plugins: PluginDefinition[]): void {
  const kindNamed = (name: string) => {
    const kind = kinds.find((k) => k.def.name === name || k.def.adminPath === name);
    if (!kind) throw new HttpError(404, `No entity named '${name}'`);
    return kind;
  };
  const check = (kind: EntityKind, body: unknown) => {
    const input = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const result = checkEntity(kind, { id: '00000000-0000-4000-8000-000000000000', created_at: 0, ...input });
    if ('errors' in result) throw schemaViolation(result.errors);
    return { message: 'schema validation successful' };
  };
  resources.add('/plugins/enabled', { get: (_req, res) => void res.json({ enabled_plugins: plugins.map((p) => p.name).sort() }) });
  resources.add('/schemas/plugins/validate', { post: (req, res) => void res.json(check(kindNamed('plugins'), req.body)) });
  resources.add('/schemas/plugins/:name', {
    get: (req, res) => {
      const plugin = plugins.find((p) => p.name === param(req, 'name'));
      if (!plugin) throw new HttpError(404, `No plugin named '${param(req, 'name')}'`);
      res.json(kongPluginSchemaOf(plugin.configSchema, { noConsumer: plugin.noConsumer, protocols: pluginProtocolsSchema(plugin.name) }));
    },
  });
  resources.add('/schemas/:entity/validate', { post: (req, res) => void res.json(check(kindNamed(param(req, 'entity')), req.body)) });
  resources.add('/schemas/:entity', { get: (req, res) => void res.json(kongEntitySchemaOf(kindNamed(param(req, 'entity')).def)) });
}
