import { z } from 'zod';
import { RATE_LIMIT_PERIODS, rateLimitingRedisSchema, type RateLimitPeriod } from '../rate-limiting/schema';

const limit = () => z.number().gt(0).nullable().default(null);

const oneDecimal = (value: number) => value.toFixed(1);

/** Kong's rule for one named limit: a longer period may not have a lower limit (its message starts lower-case here). */
function periodOrderError(limits: Partial<Record<RateLimitPeriod, number | null>>): string | null {
  for (let i = 0; i < RATE_LIMIT_PERIODS.length; i++) {
    const lower = limits[RATE_LIMIT_PERIODS[i]!];
    if (typeof lower !== 'number') continue;
    for (let j = i + 1; j < RATE_LIMIT_PERIODS.length; j++) {
      const upper = limits[RATE_LIMIT_PERIODS[j]!];
      if (typeof upper === 'number' && upper < lower) {
        return `the limit for ${RATE_LIMIT_PERIODS[j]}(${oneDecimal(upper)}) cannot be lower than the limit for ${RATE_LIMIT_PERIODS[i]}(${oneDecimal(lower)})`;
      }
    }
  }
  return null;
}

const AT_LEAST_ONE_PERIOD = `at least one of these fields must be non-empty: ${RATE_LIMIT_PERIODS.map((p) => `'${p}'`).join(', ')}`;

/** The periods of one named limit (`video: {second: 10}`). */
export const namedLimitSchema = z
  .object({ second: limit(), minute: limit(), hour: limit(), day: limit(), month: limit(), year: limit() })
  .strict()
  .superRefine((limits, ctx) => {
    if (RATE_LIMIT_PERIODS.every((period) => limits[period] === null)) ctx.addIssue({ code: 'custom', message: AT_LEAST_ONE_PERIOD, path: [] });
    const message = periodOrderError(limits);
    if (message !== null) ctx.addIssue({ code: 'custom', message, path: [] });
  });

/** a limit's name becomes part of header names (`X-RateLimit-Remaining-<name>`): an HTTP token */
const LIMIT_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

const POLICY_MESSAGE =
  "expected one of: local, redis ('cluster' keeps counters in the database, which data planes never reach: use 'redis' to share limits between data planes)";

/** Kong 3.9 `response-ratelimiting`: named limits the upstream spends by declaring usage in a response header. */
export const responseRateLimitingConfigSchema = z
  .object({
    header_name: z.string().default('x-kong-limit'),
    limit_by: z.enum(['consumer', 'credential', 'ip']).default('consumer'),
    policy: z.enum(['local', 'redis'], { error: (issue) => (issue.input === 'cluster' ? POLICY_MESSAGE : undefined) }).default('local'),
    fault_tolerant: z.boolean().default(true),
    redis: rateLimitingRedisSchema.prefault({}),
    block_on_first_violation: z.boolean().default(false),
    hide_client_headers: z.boolean().default(false),
    limits: z.record(z.string().regex(LIMIT_NAME, 'limit names go into header names: letters, digits and !#$%&\'*+.^_`|~- only'), namedLimitSchema).refine((limits) => Object.keys(limits).length > 0, 'length must be at least 1'),
  })
  .strict();

export type ResponseRateLimitingConfig = z.infer<typeof responseRateLimitingConfigSchema>;
