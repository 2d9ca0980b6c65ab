import { randomUUID } from 'node:crypto';
import type { PluginContext, PluginLogger, PluginResponse } from '../contract';
import { identifierOf } from './identifier';
import { LocalCounters } from './local-counters';
import { RedisConnections } from './redis-connections';
import { CounterStoreError, takeFromRedis, type RedisScriptRunner } from './redis-counters';
import { RATE_LIMIT_PERIODS, type RateLimitingConfig, type RateLimitPeriod } from './schema';
import type { PeriodLimit, Tally } from './tally';
import { currentWindow, secondsToReset } from './windows';
import { perConfig } from '../shared/per-config';
import { runtimeState } from '../shared/runtime-state';

const UNEXPECTED_ERROR: PluginResponse = Object.freeze({ status: 500, body: Object.freeze({ message: 'An unexpected error occurred' }) });

/** how often a failing Redis is reported (ms); the failures in between are counted in the next report */
const FAILURE_LOG_INTERVAL = 10_000;

interface ConfiguredLimit {
  period: RateLimitPeriod;
  limit: number;
  limitHeader: string;
  remainingHeader: string;
}

/** What a config turns into once: its limits shortest period first, header names, the refusal body. */
interface Plan {
  configured: ConfiguredLimit[];
  /** the limits with their windows, rebuilt when the shortest window is over */
  limits: PeriodLimit[];
  validFrom: number;
  validUntil: number;
  body: { message: string };
  /** counters' scope when the data plane gives no plugin id (plugin used outside the data plane) */
  fallbackScope: string;
}

const planFor = perConfig((config: RateLimitingConfig): Plan => {
  const configured: ConfiguredLimit[] = [];
  for (const period of RATE_LIMIT_PERIODS) {
    const limit = config[period];
    if (typeof limit !== 'number') continue;
    configured.push({ period, limit, limitHeader: `x-ratelimit-limit-${period}`, remainingHeader: `x-ratelimit-remaining-${period}` });
  }
  const plan: Plan = { configured, limits: [], validFrom: 0, validUntil: 0, body: { message: config.error_message }, fallbackScope: randomUUID() };
  return plan;
});

function limitsAt(plan: Plan, nowMs: number): PeriodLimit[] {
  if (nowMs >= plan.validFrom && nowMs < plan.validUntil) return plan.limits;
  let validFrom = -Infinity;
  let validUntil = Infinity;
  plan.limits = plan.configured.map(({ period, limit }) => {
    const window = currentWindow(period, nowMs);
    validFrom = Math.max(validFrom, window.start);
    validUntil = Math.min(validUntil, window.end);
    return { period, limit, window };
  });
  plan.validFrom = validFrom;
  plan.validUntil = validUntil;
  return plan.limits;
}

/**
 * The client headers of Kong's rate-limiting: per period `X-RateLimit-Limit-<Period>` and `-Remaining-<Period>`, and
 * `RateLimit-Limit`, `-Remaining`, `-Reset` for the most restrictive period (least remaining; on a tie the longer
 * period, as Kong picks it). Returns the Reset value, which is also the Retry-After of a refusal.
 */
export function clientHeaders(plan: Pick<Plan, 'configured'>, limits: readonly PeriodLimit[], tally: Tally, nowMs: number, set: (name: string, value: string) => void): number {
  let chosen = -1;
  let chosenRemaining = Infinity;
  for (let i = 0; i < limits.length; i++) {
    const { limit } = limits[i]!;
    const remaining = Math.max(0, limit - tally.counts[i]!);
    set(plan.configured[i]!.limitHeader, String(limit));
    set(plan.configured[i]!.remainingHeader, String(remaining));
    if (remaining <= chosenRemaining) {
      chosen = i;
      chosenRemaining = remaining;
    }
  }
  const reset = secondsToReset(limits[chosen]!.window, nowMs);
  set('ratelimit-limit', String(limits[chosen]!.limit));
  set('ratelimit-remaining', String(chosenRemaining));
  set('ratelimit-reset', String(reset));
  return reset;
}

function stderrLog(): PluginLogger {
  return { error: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'error', message, ...detail })}\n`) };
}

export interface RateLimiterOptions {
  /** epoch milliseconds; Date.now by default */
  now?: () => number;
  /** the `local` policy's counters */
  local?: LocalCounters;
  /** connections of configs that name their own Redis */
  connections?: RedisConnections;
}

export type RateLimitingAccess = (ctx: PluginContext, config: RateLimitingConfig) => PluginResponse | void | Promise<PluginResponse | void>;

/**
 * The rate-limiting access hook. `local` counts in this process and answers synchronously; `redis` counts with one
 * atomic script in the Redis every data plane shares (`config.redis.host`, else the data plane's own `runtime.redis`
 * with `runtime.redisPrefix`), so all data planes spend one budget. When Redis fails, `fault_tolerant` lets the request
 * through without rate-limit headers, otherwise it answers 500; failures are logged at most once per 10 s.
 * A request is counted only when it is let through: a refused request spends nothing.
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimitingAccess {
  const now = options.now ?? Date.now;
  const local = options.local ?? new LocalCounters();
  const connections = options.connections ?? new RedisConnections();
  let lastFailureLog = -Infinity;
  let unreportedFailures = 0;

  function respond(ctx: PluginContext, config: RateLimitingConfig, plan: Plan, limits: readonly PeriodLimit[], tally: Tally, nowMs: number): PluginResponse | void {
    if (config.hide_client_headers) return tally.blocked ? { status: config.error_code, body: plan.body } : undefined;
    if (!tally.blocked) {
      const response = ctx.response;
      if (response !== undefined) clientHeaders(plan, limits, tally, nowMs, (name, value) => response.setHeader(name, value));
      return;
    }
    const headers: Record<string, string> = {};
    const reset = clientHeaders(plan, limits, tally, nowMs, (name, value) => void (headers[name] = value));
    headers['retry-after'] = String(reset);
    return { status: config.error_code, body: plan.body, headers };
  }

  function unavailable(ctx: PluginContext, config: RateLimitingConfig, err: unknown): PluginResponse | void {
    const nowMs = now();
    if (nowMs - lastFailureLog >= FAILURE_LOG_INTERVAL) {
      (ctx.runtime.log ?? stderrLog()).error(config.policy === 'local' ? "rate-limiting: the node's counters are unavailable" : 'rate-limiting: Redis unavailable', {
        plugin_id: ctx.pluginId,
        error: err instanceof Error ? err.message : String(err),
        fault_tolerant: config.fault_tolerant,
        failures_since_last_report: unreportedFailures,
      });
      lastFailureLog = nowMs;
      unreportedFailures = 0;
    } else {
      unreportedFailures++;
    }
    return config.fault_tolerant ? undefined : UNEXPECTED_ERROR;
  }

  function redisOf(ctx: PluginContext, config: RateLimitingConfig): RedisScriptRunner | null {
    if (config.redis.host !== null) return connections.get(config.redis);
    return ctx.runtime.redis ?? null;
  }

  return function rateLimitingAccess(ctx, config) {
    const plan = planFor(config);
    const nowMs = now();
    const limits = limitsAt(plan, nowMs);
    if (limits.length === 0) return;
    const scope = `${ctx.pluginId ?? plan.fallbackScope}:${identifierOf(ctx, config)}`;
    if (config.policy === 'local') {
      const shared = ctx.runtime.rateLimitCounters;
      if (shared === undefined) return respond(ctx, config, plan, limits, local.take(scope, limits), nowMs);
      // the node's counters, held by its primary: one batched round trip, exact across workers
      const taken = shared.take(scope, limits);
      if (!(taken instanceof Promise)) return respond(ctx, config, plan, limits, taken, nowMs);
      return taken.then(
        (tally) => respond(ctx, config, plan, limits, tally, nowMs),
        (err: unknown) => unavailable(ctx, config, err),
      );
    }

    const client = redisOf(ctx, config);
    if (client === null) return unavailable(ctx, config, new CounterStoreError('no Redis: set config.redis.host, or give the data plane REDIS_URL'));
    return takeFromRedis(client, ctx.runtime.redisPrefix ?? '', scope, limits, nowMs, config.redis.timeout).then(
      (tally) => respond(ctx, config, plan, limits, tally, nowMs),
      (err: unknown) => unavailable(ctx, config, err),
    );
  };
}

/**
 * What the bundled plugin keeps per data-plane node: the `local` counters (when the node has no shared ones), the
 * connections of configs with their own `config.redis.host`, and the hook using them (Date.now).
 */
export const rateLimitingState = runtimeState(() => {
  const connections = new RedisConnections();
  const access = createRateLimiter({ connections });
  return { access, close: () => connections.close() };
});
