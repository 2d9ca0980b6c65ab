import { Errors, kongPluginSchemaOf } from '@gatehouse/core';
import { pluginProtocolsSchema } from '@gatehouse/plugins';
import { param, type AdminContext } from '../http/context';

/** Kong's fixed plugin paths, mounted before `/plugins/{id_or_instance_name}`. */
export function mountPluginRoutes(ctx: AdminContext): void {
  const { resources, plugins } = ctx;
  resources.add('/plugins/enabled', {
    get: (_req, res) => {
      res.json({ enabled_plugins: plugins.map((p) => p.name).sort() });
    },
  });
  // the pre-3.0 location of /schemas/plugins/{name}
  resources.add('/plugins/schema/:name', {
    get: (req, res) => {
      const plugin = plugins.find((p) => p.name === param(req, 'name'));
      if (!plugin) throw Errors.notFound();
      res.json(kongPluginSchemaOf(plugin.configSchema, { noConsumer: plugin.noConsumer, protocols: pluginProtocolsSchema(plugin.name) }));
    },
  });
}
