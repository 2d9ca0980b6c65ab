import { z } from 'zod';
import { baseFields, foreignRef, timeout, type EntityDefinition } from '@gatehouse/core';

/**
 * The `/apis` entity of Kong 0.10–0.14, kept as a compatibility layer: each API is stored as a service + route
 * pair named after it (what the data plane sees) plus this row, which keeps the API's own fields and points at
 * the pair.
 */
const name = z.string().min(1).regex(/^[A-Za-z0-9._~-]+$/, "invalid value: must contain only alphanumeric and '., -, _, ~' characters");

function upstreamUrl() {
  return z.string().refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'should be a valid URL with the http or https scheme');
}

export const apiInputSchema = z
  .object({
    ...baseFields,
    name,
    hosts: z.array(z.string().min(1)).nullable().default(null),
    uris: z.array(z.string().startsWith('/', 'should start with: /')).nullable().default(null),
    methods: z.array(z.string().regex(/^[A-Z]+$/, 'invalid value: must be uppercase')).nullable().default(null),
    upstream_url: upstreamUrl(),
    strip_uri: z.boolean().default(true),
    preserve_host: z.boolean().default(false),
    https_only: z.boolean().default(false),
    http_if_terminated: z.boolean().default(true),
    retries: z.number().int().min(0).max(32767).default(5),
    upstream_connect_timeout: timeout().default(60000),
    upstream_send_timeout: timeout().default(60000),
    upstream_read_timeout: timeout().default(60000),
  })
  .strict();
export type ApiInput = z.output<typeof apiInputSchema>;

export const apiStoredSchema = apiInputSchema.extend({ service: foreignRef(), route: foreignRef() });

export const apis: EntityDefinition = {
  name: 'apis',
  adminPath: 'apis',
  schema: apiStoredSchema,
  endpointKey: 'name',
  uniques: ['name'],
  foreignKeys: [
    // deleting the pair behind an API (directly through /routes or /services) removes the API as well
    { field: 'service', entity: 'services', onDelete: 'cascade', required: true },
    { field: 'route', entity: 'routes', onDelete: 'cascade', required: true },
  ],
  updatedAt: false,
  check: (e) => {
    const empty = (v: unknown) => v == null || (Array.isArray(v) && v.length === 0);
    return empty(e.hosts) && empty(e.uris) && empty(e.methods)
      ? { '@entity': ["at least one of 'hosts', 'uris' or 'methods' must be specified"] }
      : null;
  },
};
