import { z } from 'zod';

/** The periods a limit can be set for, shortest first (the order of Kong's checks and headers). */
export const RATE_LIMIT_PERIODS = ['second', 'minute', 'hour', 'day', 'month', 'year'] as const;
export type RateLimitPeriod = (typeof RATE_LIMIT_PERIODS)[number];

export const LIMIT_BY = ['consumer', 'credential', 'ip', 'service', 'header', 'path'] as const;
export type LimitBy = (typeof LIMIT_BY)[number];

const limit = () => z.number().gt(0).nullable().default(null);

/** A connection of the plugin's own (Kong's `config.redis`); without `host` the data plane's own Redis is used. */
export const rateLimitingRedisSchema = z
  .object({
    host: z.string().min(1).nullable().default(null),
    port: z.number().int().min(0).max(65535).default(6379),
    timeout: z.number().int().min(0).max(2147483646).default(2000),
    username: z.string().nullable().default(null),
    password: z.string().nullable().default(null),
    database: z.number().int().default(0),
    ssl: z.boolean().default(false),
    ssl_verify: z.boolean().default(false),
    server_name: z.string().nullable().default(null),
  })
  .strict();

export type RateLimitingRedisConfig = z.infer<typeof rateLimitingRedisSchema>;

const POLICY_MESSAGE =
  "expected one of: local, redis ('cluster' keeps counters in the database, which data planes never reach: use 'redis' to share limits between data planes)";

export const rateLimitingConfigSchema = z
  .object({
    second: limit(),
    minute: limit(),
    hour: limit(),
    day: limit(),
    month: limit(),
    year: limit(),
    limit_by: z.enum(LIMIT_BY).default('consumer'),
    header_name: z.string().min(1).nullable().default(null),
    path: z.string().startsWith('/', 'should start with: /').nullable().default(null),
    policy: z.enum(['local', 'redis'], { error: (issue) => (issue.input === 'cluster' ? POLICY_MESSAGE : undefined) }).default('local'),
    fault_tolerant: z.boolean().default(true),
    redis: rateLimitingRedisSchema.prefault({}),
    hide_client_headers: z.boolean().default(false),
    error_code: z.number().gt(0).default(429),
    error_message: z.string().default('API rate limit exceeded'),
    /** accepted for compatibility; counters are always updated on the request path */
    sync_rate: z.number().default(-1),
  })
  .strict()
  .superRefine((config, ctx) => {
    const message = periodOrderError(config);
    if (message !== null) ctx.addIssue({ code: 'custom', message, path: [] });
  });

export type RateLimitingConfig = z.infer<typeof rateLimitingConfigSchema>;

/** Kong prints the limits as Lua's `%.1f`. */
const oneDecimal = (value: number) => value.toFixed(1);

/**
 * Kong's rule that a longer period may not have a lower limit, with its message, e.g.
 * "The limit for hour(5.0) cannot be lower than the limit for minute(10.0)". It is a check on the whole config record,
 * so the error sits at `fields.config`, as in Kong.
 */
export function periodOrderError(config: Partial<Record<RateLimitPeriod, number | null>>): string | null {
  for (let i = 0; i < RATE_LIMIT_PERIODS.length; i++) {
    const shorter = RATE_LIMIT_PERIODS[i]!;
    const lower = config[shorter];
    if (typeof lower !== 'number') continue;
    for (let j = i + 1; j < RATE_LIMIT_PERIODS.length; j++) {
      const longer = RATE_LIMIT_PERIODS[j]!;
      const upper = config[longer];
      if (typeof upper === 'number' && upper < lower) {
        return `The limit for ${longer}(${oneDecimal(upper)}) cannot be lower than the limit for ${shorter}(${oneDecimal(lower)})`;
      }
    }
  }
  return null;
}

const AT_LEAST_ONE_PERIOD = `at least one of these fields must be non-empty: ${RATE_LIMIT_PERIODS.map((p) => `'config.${p}'`).join(', ')}`;

/** Kong's entity checks: at least one limit; `header_name` with limit_by header; `path` with limit_by path. */
export function checkRateLimitingConfig(config: RateLimitingConfig): Record<string, string | string[]> | null {
  if (RATE_LIMIT_PERIODS.every((period) => config[period] == null)) return { '@entity': [AT_LEAST_ONE_PERIOD] };
  if (config.limit_by === 'header' && config.header_name == null) {
    return { '@entity': ["failed conditional validation given value of field 'config.limit_by'"], header_name: 'required field missing' };
  }
  if (config.limit_by === 'path' && config.path == null) {
    return { '@entity': ["failed conditional validation given value of field 'config.limit_by'"], path: 'required field missing' };
  }
  return null;
}

/** Kong 3.9's deprecated `config.redis_*` fields (shorthand_fields), still accepted until 4.0 */
const REDIS_SHORTHANDS = ['host', 'port', 'password', 'username', 'ssl', 'ssl_verify', 'server_name', 'timeout', 'database'] as const;

/**
 * `config.redis_host: h` → `config.redis.host: h`, for each shorthand given; a value set under `redis` itself wins
 * (Kong's own dumps carry both forms, the unset one as null).
 */
export function rateLimitingShorthands(config: Record<string, unknown>): Record<string, unknown> {
  if (!REDIS_SHORTHANDS.some((field) => `redis_${field}` in config)) return config;
  const { ...out } = config;
  const given = out.redis && typeof out.redis === 'object' && !Array.isArray(out.redis) ? (out.redis as Record<string, unknown>) : {};
  const redis: Record<string, unknown> = { ...given };
  for (const field of REDIS_SHORTHANDS) {
    const key = `redis_${field}`;
    if (!(key in out)) continue;
    if (out[key] !== null && out[key] !== undefined && (redis[field] === null || redis[field] === undefined)) redis[field] = out[key];
    delete out[key];
  }
  out.redis = redis;
  return out;
}
