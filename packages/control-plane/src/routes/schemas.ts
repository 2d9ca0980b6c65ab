import { HttpError, kongEntitySchemaOf, kongPluginSchemaOf } from '@gatehouse/core';
import { pluginProtocolsSchema } from '@gatehouse/plugins';
import { param, writeInput, type AdminContext } from '../http/context';

/** declarative entity checks Kong lists in its schema documents */
const ENTITY_CHECKS: Record<string, Array<Record<string, unknown>>> = {
  consumers: [{ at_least_one_of: ['custom_id', 'username'] }],
  keys: [{ at_least_one_of: ['jwk', 'pem'] }, { mutually_exclusive: ['jwk', 'pem'] }],
};

/**
 * Kong's schema documents, read by Kong Manager to build its forms: /schemas/{entity}, /schemas/plugins/{name}, and
 * the dry-run checks /schemas/{entity}/validate and /schemas/plugins/validate.
 */
export function mountSchemaRoutes(ctx: AdminContext): void {
  const { resources, entities, plugins } = ctx;

  const validated = { message: 'schema validation successful' };
  resources.add('/schemas/plugins/validate', {
    post: async (req, res) => {
      await entities.check(entities.kind('plugins'), writeInput(req, res));
      res.json(validated);
    },
  });

  resources.add('/schemas/plugins/:name', {
    get: (req, res) => {
      const name = param(req, 'name');
      const plugin = plugins.find((p) => p.name === name);
      if (!plugin) throw new HttpError(404, `No plugin named '${name}'`);
      res.json(kongPluginSchemaOf(plugin.configSchema, { noConsumer: plugin.noConsumer, protocols: pluginProtocolsSchema(plugin.name) }));
    },
  });

  resources.add('/schemas/:entity/validate', {
    post: async (req, res) => {
      const name = param(req, 'entity');
      const kind = entities.allKinds().find((k) => k.def.name === name || k.def.adminPath === name);
      if (!kind) throw new HttpError(404, `No entity named '${name}'`);
      await entities.check(kind, writeInput(req, res));
      res.json(validated);
    },
  });

  resources.add('/schemas/:entity', {
    get: (req, res) => {
      const name = param(req, 'entity');
      const kind = entities.allKinds().find((k) => k.def.name === name || k.def.adminPath === name);
      if (!kind) throw new HttpError(404, `No entity named '${name}'`);
      res.json(kongEntitySchemaOf(kind.def, { entityChecks: ENTITY_CHECKS[kind.def.name] }));
    },
  });
}
