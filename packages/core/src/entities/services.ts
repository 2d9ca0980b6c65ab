import { z } from 'zod';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, port, tags, timeout, utf8Name } from './fields';

/** Kong 3.9's protocols (`ws`/`wss` are Kong Enterprise's and refused). */
export const SERVICE_PROTOCOLS = ['grpc', 'grpcs', 'http', 'https', 'tcp', 'tls', 'tls_passthrough', 'udp'] as const;
/** protocols whose services carry no path, as Kong checks it */
const PATHLESS = new Set(['tcp', 'tls', 'udp', 'grpc', 'grpcs']);

export const serviceSchema = z
  .object({
    ...baseFieldsWithUpdate,
    name: utf8Name().nullable().default(null),
    retries: z.number().int().min(0).max(32767).default(5),
    protocol: z.enum(SERVICE_PROTOCOLS).default('http'),
    host: z.string().min(1),
    port: port().default(80),
    path: z.string().startsWith('/', 'should start with: /').nullable().default(null),
    connect_timeout: timeout().default(60000),
    write_timeout: timeout().default(60000),
    read_timeout: timeout().default(60000),
    tags: tags(),
    client_certificate: z.object({ id: z.guid() }).nullable().default(null),
    tls_verify: z.boolean().nullable().default(null),
    tls_verify_depth: z.number().int().min(0).max(64).nullable().default(null),
    ca_certificates: z.array(z.guid()).nullable().default(null),
    enabled: z.boolean().default(true),
  })
  .strict();
export type Service = z.infer<typeof serviceSchema> & { id: string; created_at: number; updated_at: number };

/** The `url` shorthand fills protocol, host, port and path. */
export function expandServiceUrl(input: Record<string, unknown>): Record<string, unknown> {
  if (!('url' in input)) return input;
  const { url, ...rest } = input;
  if (url === null || url === undefined) return rest;
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return { ...rest, url };
  }
  const protocol = parsed.protocol.replace(/:$/, '');
  const defaultPort = protocol === 'https' || protocol === 'grpcs' || protocol === 'tls' ? 443 : 80;
  return {
    ...rest,
    protocol,
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : defaultPort,
    path: parsed.pathname && parsed.pathname !== '/' ? decodeURI(parsed.pathname) : parsed.pathname === '/' && String(url).replace(/^[a-z]+:\/\/[^/]*/i, '') === '/' ? '/' : null,
  };
}

export const services = defineEntity({
  name: 'services',
  adminPath: 'services',
  schema: serviceSchema,
  endpointKey: 'name',
  uniques: ['name'],
  foreignKeys: [],
  updatedAt: true,
  normalizeInput: expandServiceUrl,
  check: (e) =>
    PATHLESS.has(String(e.protocol)) && e.path != null
      ? { '@entity': ["failed conditional validation given value of field 'protocol'"], path: 'value must be null' }
      : null,
});
