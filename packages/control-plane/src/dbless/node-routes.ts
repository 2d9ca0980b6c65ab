import { HttpError, kongEntitySchemaOf, kongPluginSchemaOf } from '@gatehouse/core';
import { pluginProtocolsSchema, type PluginDefinition } from '@gatehouse/plugins';
import { param } from '../http/context';
import type { ResourceRegistry } from '../http/resources';
import { checkEntity } from '../declarative/apply';
import { schemaViolation } from '@gatehouse/core';
import { nodeInformation, serverStatus, type NodeInfo } from '../routes/root';
import type { EntityKind } from '../service/entity-kind';
import type { DeclarativeSource } from './declarative-source';

/** GET / and GET /status of a node without a database: `database: off`, and the loaded configuration's hash. */
export function mountDeclarativeNodeRoutes(resources: ResourceRegistry, node: NodeInfo, plugins: PluginDefinition[], source: DeclarativeSource): void {
  resources.add('/', {
    get: (_req, res) => {
      const enabled = [...new Set((source.state.entities.get('plugins') ?? []).map((p) => String(p.name)))].sort();
      const info = nodeInformation(node, plugins, enabled, {});
      // whatever the node's configuration says, there is no database
      info.configuration.database = 'off';
      res.json(info);
    },
  });
  resources.add('/status', {
    get: async (_req, res) => {
      const extras = node.statusExtras ? await node.statusExtras() : {};
      // Kong leaves `database` out without one, and reports the loaded configuration's hash instead
      res.json({ configuration_hash: source.state.hash, config_version: source.status().version, server: serverStatus(node.counters), ...extras });
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
