import type { PluginContext } from '../contract';
import { LocalCounters } from '../rate-limiting/local-counters';
import { RedisConnections } from '../rate-limiting/redis-connections';
import { addInRedis, CounterStoreError, peekInRedis, type RedisScriptRunner } from '../rate-limiting/redis-counters';
import { RATE_LIMIT_PERIODS, type RateLimitPeriod } from '../rate-limiting/schema';
import type { PeriodLimit } from '../rate-limiting/tally';
import { currentWindow } from '../rate-limiting/windows';
import type { ResponseRateLimitingConfig } from './schema';

/** One named limit's periods with their current windows, shortest period first. */
export interface NamedLimits {
  name: string;
  limits: PeriodLimit[];
}

/** What one named limit had left when the request came in, per period (same order as its `limits`). */
export interface NamedUsage extends NamedLimits {
  remaining: number[];
}

/** The configured limits with the windows `nowMs` falls in. */
export function limitsAt(config: ResponseRateLimitingConfig, nowMs: number): NamedLimits[] {
  const named: NamedLimits[] = [];
  for (const [name, periods] of Object.entries(config.limits)) {
    const limits: PeriodLimit[] = [];
    for (const period of RATE_LIMIT_PERIODS) {
      const limit = periods[period as RateLimitPeriod];
      if (typeof limit === 'number') limits.push({ period, limit, window: currentWindow(period, nowMs) });
    }
    named.push({ name, limits });
  }
  return named;
}

/** Where the counters live: this process (`local`) or a Redis (`redis`), over rate-limiting's counter code. */
export class UsageCounters {
  constructor(
    private readonly local = new LocalCounters(),
    private readonly connections = new RedisConnections(),
  ) {}

  private redisOf(ctx: PluginContext, config: ResponseRateLimitingConfig): RedisScriptRunner {
    if (config.redis.host !== null) return this.connections.get(config.redis);
    const own = ctx.runtime.redis;
    if (own === undefined) throw new CounterStoreError('no Redis: set config.redis.host, or give the data plane REDIS_URL');
    return own;
  }

  /** The counts of one named limit under `scope`. */
  peek(ctx: PluginContext, config: ResponseRateLimitingConfig, scope: string, limits: readonly PeriodLimit[]): number[] | Promise<number[]> {
    if (config.policy === 'local') {
      // the node's counters when its proxy workers share them (held by the primary), else this process's
      const node = ctx.runtime.rateLimitCounters;
      return node?.peek !== undefined ? node.peek(scope, limits) : this.local.peek(scope, limits);
    }
    return peekInRedis(this.redisOf(ctx, config), ctx.runtime.redisPrefix ?? '', scope, limits, config.redis.timeout);
  }

  /** Spends `amount` of one named limit under `scope`. */
  add(ctx: PluginContext, config: ResponseRateLimitingConfig, scope: string, limits: readonly PeriodLimit[], amount: number, nowMs: number): void | Promise<void> {
    if (config.policy === 'local') {
      const node = ctx.runtime.rateLimitCounters;
      return node?.add !== undefined ? node.add(scope, limits, amount) : this.local.add(scope, limits, amount);
    }
    return addInRedis(this.redisOf(ctx, config), ctx.runtime.redisPrefix ?? '', scope, limits, amount, nowMs, config.redis.timeout);
  }

  /** Closes the Redis connections of configs naming their own server. */
  close(): void {
    this.connections.close();
  }
}

/** Whose budget a request spends (Kong's choice for this plugin): consumer, else credential, else the client IP. */
export function identifierOf(ctx: PluginContext, config: ResponseRateLimitingConfig): string {
  if (config.limit_by === 'consumer') return ctx.consumer?.id ?? ctx.credential?.id ?? ctx.req.clientIp;
  if (config.limit_by === 'credential') return ctx.credential?.id ?? ctx.req.clientIp;
  return ctx.req.clientIp;
}

/**
 * The usage the upstream declares, as Kong reads it: `name=amount` pairs separated by commas, over every line of the
 * header; names without a configured limit and amounts that are not numbers are ignored.
 */
export function parseIncrements(header: string | string[] | undefined, config: ResponseRateLimitingConfig): Map<string, number> {
  const increments = new Map<string, number>();
  if (header === undefined) return increments;
  const parts = Array.isArray(header) ? header.flatMap((line) => line.split(',')) : header.split(',');
  for (const part of parts) {
    const pair = part.split('=');
    if (pair.length !== 2) continue;
    const name = pair[0]!.trim();
    const amountText = pair[1]!.trim();
    const amount = Number(amountText);
    if (!Object.hasOwn(config.limits, name) || amountText === '' || !Number.isFinite(amount)) continue;
    increments.set(name, amount);
  }
  return increments;
}
