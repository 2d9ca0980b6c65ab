import { z } from 'zod';
import type { FieldErrors } from '../errors';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, tags } from './fields';
import { isHostname, parseHostPort } from './hosts';

/** Kong's order (its `one_of`), which its validation message lists. */
export const BALANCER_ALGORITHMS = ['consistent-hashing', 'least-connections', 'round-robin', 'latency'] as const;
export const HASH_ON = ['none', 'consumer', 'ip', 'header', 'cookie', 'path', 'query_arg', 'uri_capture'] as const;
export const ACTIVE_CHECK_TYPES = ['tcp', 'http', 'https', 'grpc', 'grpcs'] as const;
export const PASSIVE_CHECK_TYPES = ['tcp', 'http', 'https', 'grpc', 'grpcs'] as const;

/** Kong's default status lists. */
export const ACTIVE_HEALTHY_STATUSES = [200, 302];
export const ACTIVE_UNHEALTHY_STATUSES = [429, 404, 500, 501, 502, 503, 504, 505];
export const PASSIVE_HEALTHY_STATUSES = [200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 306, 307, 308];
export const PASSIVE_UNHEALTHY_STATUSES = [429, 500, 503];

const httpStatuses = (defaults: number[]) => z.array(z.number().int().min(100).max(999)).max(1000).prefault(defaults);
/** seconds between checks; 0 = off */
const interval = () => z.number().min(0).max(65535).default(0);
/** a counter threshold; 0 = off */
const counter = () => z.number().int().min(0).max(255).default(0);

const headerName = () => z.string().min(1).max(1024).regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'bad header name, allowed characters are A-Z, a-z, 0-9, \'_\', and \'-\'');

export const activeHealthcheckSchema = z
  .object({
    type: z.enum(ACTIVE_CHECK_TYPES).default('http'),
    /** seconds */
    timeout: z.number().min(0).max(65535).default(1),
    concurrency: z.number().int().min(1).max(2 ** 31 - 1).default(10),
    http_path: z.string().max(1024).startsWith('/', 'should start with: /').default('/'),
    https_sni: z.string().max(1024).nullable().default(null),
    https_verify_certificate: z.boolean().default(true),
    headers: z.record(z.string(), z.array(z.string().max(1024)).max(1000)).nullable().default(null),
    healthy: z
      .object({ interval: interval(), http_statuses: httpStatuses(ACTIVE_HEALTHY_STATUSES), successes: counter() })
      .strict()
      .prefault({}),
    unhealthy: z
      .object({
        interval: interval(),
        http_statuses: httpStatuses(ACTIVE_UNHEALTHY_STATUSES),
        tcp_failures: counter(),
        timeouts: counter(),
        http_failures: counter(),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export const passiveHealthcheckSchema = z
  .object({
    type: z.enum(PASSIVE_CHECK_TYPES).default('http'),
    healthy: z.object({ http_statuses: httpStatuses(PASSIVE_HEALTHY_STATUSES), successes: counter() }).strict().prefault({}),
    unhealthy: z
      .object({ http_statuses: httpStatuses(PASSIVE_UNHEALTHY_STATUSES), tcp_failures: counter(), timeouts: counter(), http_failures: counter() })
      .strict()
      .prefault({}),
  })
  .strict();

export const healthchecksSchema = z
  .object({
    active: activeHealthcheckSchema.prefault({}),
    passive: passiveHealthcheckSchema.prefault({}),
    threshold: z.number().min(0).max(100).default(0),
  })
  .strict();

export type Healthchecks = z.infer<typeof healthchecksSchema>;

const upstreamName = () =>
  z
    .string()
    .min(1)
    .max(1024)
    .superRefine((name, ctx) => {
      const parsed = parseHostPort(name);
      if (parsed === null) ctx.addIssue({ code: 'custom', message: `Invalid name ('${name}'); must be a valid hostname` });
      else if (parsed.kind !== 'name') ctx.addIssue({ code: 'custom', message: `Invalid name ('${name}'); no ip addresses allowed` });
      else if (parsed.port !== null) ctx.addIssue({ code: 'custom', message: `Invalid name ('${name}'); no port allowed` });
    });

const hostField = () =>
  z
    .string()
    .min(1)
    .max(1024)
    .refine((h) => isHostname(h) || parseHostPort(h)?.port === null, { message: 'invalid value' });

const optionalText = () => z.string().min(1).max(1024).nullable().default(null);

export const upstreamSchema = z
  .object({
    ...baseFieldsWithUpdate,
    name: upstreamName(),
    algorithm: z.enum(BALANCER_ALGORITHMS).default('round-robin'),
    hash_on: z.enum(HASH_ON).default('none'),
    hash_fallback: z.enum(HASH_ON).default('none'),
    hash_on_header: headerName().nullable().default(null),
    hash_fallback_header: headerName().nullable().default(null),
    hash_on_cookie: optionalText(),
    hash_on_cookie_path: z.string().max(1024).startsWith('/', 'should start with: /').default('/'),
    hash_on_query_arg: optionalText(),
    hash_fallback_query_arg: optionalText(),
    hash_on_uri_capture: optionalText(),
    hash_fallback_uri_capture: optionalText(),
    slots: z.number().int().min(10).max(2 ** 16).default(10000),
    healthchecks: healthchecksSchema.prefault({}),
    tags: tags(),
    host_header: hostField().nullable().default(null),
    /**
     * A reference to a certificate, accepted and stored as given: it is not checked against `certificates` (an entity
     * this module does not own) and the data plane does not present it yet.
     */
    client_certificate: z.object({ id: z.guid() }).strict().nullable().default(null),
    use_srv_name: z.boolean().default(false),
  })
  .strict();
export type Upstream = z.infer<typeof upstreamSchema> & { id: string; created_at: number; updated_at: number };

/** Kong's entity checks on the hashing fields: each hash source names what it reads, and the fallback must differ. */
export function checkUpstreamHashing(e: Record<string, unknown>): FieldErrors | null {
  const fields: FieldErrors = {};
  const entity: string[] = [];
  const hashOn = e.hash_on as string;
  const fallback = e.hash_fallback as string;
  const need = (field: string) => {
    if (e[field] == null) fields[field] = 'required field missing';
  };
  if (hashOn === 'header') need('hash_on_header');
  if (fallback === 'header') need('hash_fallback_header');
  if (hashOn === 'cookie' || fallback === 'cookie') need('hash_on_cookie');
  if (hashOn === 'query_arg') need('hash_on_query_arg');
  if (fallback === 'query_arg') need('hash_fallback_query_arg');
  if (hashOn === 'uri_capture') need('hash_on_uri_capture');
  if (fallback === 'uri_capture') need('hash_fallback_uri_capture');
  if ((hashOn === 'none' || hashOn === 'cookie') && fallback !== 'none' && fields.hash_fallback === undefined) {
    fields.hash_fallback = 'expected one of: none';
  }
  if (fallback === 'cookie' && hashOn !== 'cookie' && fields.hash_fallback === undefined) fields.hash_fallback = 'expected one of: none';
  if (hashOn !== 'none' && hashOn === fallback && !['header', 'query_arg', 'uri_capture'].includes(hashOn) && fields.hash_fallback === undefined) {
    fields.hash_fallback = `must be different from hash_on ('${hashOn}')`;
  }
  if (e.hash_on_header != null && e.hash_on_header === e.hash_fallback_header && hashOn === 'header' && fallback === 'header') {
    entity.push("values of these fields must be distinct: 'hash_on_header', 'hash_fallback_header'");
  }
  if (e.hash_on_query_arg != null && e.hash_on_query_arg === e.hash_fallback_query_arg) {
    entity.push("values of these fields must be distinct: 'hash_on_query_arg', 'hash_fallback_query_arg'");
  }
  if (e.hash_on_uri_capture != null && e.hash_on_uri_capture === e.hash_fallback_uri_capture) {
    entity.push("values of these fields must be distinct: 'hash_on_uri_capture', 'hash_fallback_uri_capture'");
  }
  if (entity.length > 0) fields['@entity'] = entity;
  return Object.keys(fields).length > 0 ? fields : null;
}

export const upstreams = defineEntity({
  name: 'upstreams',
  adminPath: 'upstreams',
  schema: upstreamSchema,
  endpointKey: 'name',
  uniques: ['name'],
  foreignKeys: [],
  updatedAt: true,
  check: checkUpstreamHashing,
});
