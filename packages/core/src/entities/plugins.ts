import { z } from 'zod';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, nullableForeign, tags, utf8Name } from './fields';

export const PLUGIN_PROTOCOLS = ['grpc', 'grpcs', 'http', 'https', 'tcp', 'tls', 'tls_passthrough', 'udp'] as const;
/** the protocols of a plugin that runs on HTTP only (Kong's `typedefs.protocols_http`) */
export const HTTP_PLUGIN_PROTOCOLS = ['grpc', 'grpcs', 'http', 'https'] as const;
/** the `protocols` field of an HTTP-only plugin: a stream protocol is refused with Kong's message */
export const httpPluginProtocols = z.array(z.enum(HTTP_PLUGIN_PROTOCOLS)).min(1).default(['grpc', 'grpcs', 'http', 'https']);

/**
 * The plugin entity. `config` is validated by the named plugin's own schema (see @gatehouse/plugins),
 * so here it is an open record; the control plane swaps in the plugin's schema before validating.
 */
export const pluginSchema = z
  .object({
    ...baseFieldsWithUpdate,
    name: z.string().min(1),
    instance_name: utf8Name().nullable().default(null),
    route: nullableForeign(),
    service: nullableForeign(),
    consumer: nullableForeign(),
    config: z.record(z.string(), z.unknown()).default({}),
    protocols: z.array(z.enum(PLUGIN_PROTOCOLS)).min(1).default(['grpc', 'grpcs', 'http', 'https']),
    enabled: z.boolean().default(true),
    tags: tags(),
  })
  .strict();
export type Plugin = z.infer<typeof pluginSchema> & { id: string; created_at: number; updated_at: number };

export const plugins = defineEntity({
  name: 'plugins',
  adminPath: 'plugins',
  schema: pluginSchema,
  endpointKey: 'instance_name',
  uniques: ['instance_name'],
  compositeUniques: [['name', 'route', 'service', 'consumer']],
  foreignKeys: [
    { field: 'route', entity: 'routes', onDelete: 'cascade', required: false },
    { field: 'service', entity: 'services', onDelete: 'cascade', required: false },
    { field: 'consumer', entity: 'consumers', onDelete: 'cascade', required: false },
  ],
  updatedAt: true,
});
