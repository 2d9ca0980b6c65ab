import { z } from 'zod';
import type { PluginContext, PluginResponse, PluginRuntime, RateLimitCounterStore } from '../contract';
import { currentWindow, secondsToReset } from '../rate-limiting/windows';
import { LocalCounters } from '../rate-limiting/local-counters';
import { addInRedis, peekInRedis } from '../rate-limiting/redis-counters';
import type { PeriodLimit } from '../rate-limiting/tally';

export const TOKEN_PERIODS = ['minute', 'hour', 'day'] as const;

const limit = () => z.number().int().gt(0, 'value must be greater than 0').nullable().default(null);

/**
 * Tokens a consumer may spend through one ai-proxy configuration (beyond Kong OSS): per minute, hour and day, counted
 * in the same fixed windows as rate-limiting, in this data plane (`local`) or in the data planes' Redis (`redis`,
 * shared by all).
 */
export const tokenLimitsSchema = z
  .object({
    minute: limit(),
    hour: limit(),
    day: limit(),
    limit_by: z.enum(['consumer', 'credential', 'ip']).default('consumer'),
    policy: z.enum(['local', 'redis']).default('local'),
  })
  .strict();
export type TokenLimits = z.infer<typeof tokenLimitsSchema>;

/** how long a `redis` counter read or write may take before the budget is left unenforced for the request */
const REDIS_TIMEOUT_MS = 2000;

/**
 * Token counts over rate-limiting's counters: the node's shared `local` counters (or this process's), or Redis's with
 * rate-limiting's scripts; `peek` reads them before the call, `add` spends a finished call's tokens.
 */
class TokenCounter {
  private static readonly processCounters = new WeakMap<PluginRuntime, LocalCounters>();

  constructor(
    private readonly runtime: PluginRuntime,
    private readonly policy: TokenLimits['policy'],
  ) {}

  private local(): Required<Pick<RateLimitCounterStore, 'peek' | 'add'>> {
    const node = this.runtime.rateLimitCounters;
    if (node?.peek !== undefined && node.add !== undefined) return { peek: (key, limits) => node.peek!(key, limits), add: (key, limits, amount) => node.add!(key, limits, amount) };
    let own = TokenCounter.processCounters.get(this.runtime);
    if (own === undefined) TokenCounter.processCounters.set(this.runtime, (own = new LocalCounters()));
    return own;
  }

  async peek(scope: string, limits: readonly PeriodLimit[]): Promise<number[]> {
    if (this.policy === 'local') return this.local().peek(scope, limits);
    return peekInRedis(this.runtime.redis!, this.runtime.redisPrefix ?? '', scope, limits, REDIS_TIMEOUT_MS);
  }

  async add(scope: string, limits: readonly PeriodLimit[], tokens: number): Promise<void> {
    if (this.policy === 'local') return this.local().add(scope, limits, tokens);
    await addInRedis(this.runtime.redis!, this.runtime.redisPrefix ?? '', scope, limits, tokens, Date.now(), REDIS_TIMEOUT_MS);
  }
}

function identifierOf(ctx: PluginContext, limits: TokenLimits): string {
  const ip = ctx.req.clientIp;
  if (limits.limit_by === 'consumer') return ctx.consumer?.id ?? ctx.credential?.id ?? ip;
  if (limits.limit_by === 'credential') return ctx.credential?.id ?? ip;
  return ip;
}

/** One request's token budget: checked before the provider is called, spent once the provider says what it used. */
export class TokenBudget {
  private constructor(
    private readonly counter: TokenCounter,
    private readonly scope: string,
    private readonly limits: PeriodLimit[],
    private readonly used: number[],
  ) {}

  /** the budget of this request, or null when no limit applies (or `redis` has no Redis: limits are not enforced) */
  static async open(ctx: PluginContext, limits: TokenLimits | null, pluginId: string): Promise<TokenBudget | null> {
    if (limits === null) return null;
    if (limits.policy === 'redis' && ctx.runtime.redis === undefined) return null;
    const now = Date.now();
    const periods: PeriodLimit[] = [];
    for (const period of TOKEN_PERIODS) {
      const max = limits[period];
      if (max !== null) periods.push({ period, limit: max, window: currentWindow(period, now) });
    }
    if (periods.length === 0) return null;
    const counter = new TokenCounter(ctx.runtime, limits.policy);
    const scope = `ai-tokens:${pluginId}:${identifierOf(ctx, limits)}`;
    return new TokenBudget(counter, scope, periods, await counter.peek(scope, periods));
  }

  /** `X-AI-RateLimit-Limit-<period>` and `-Remaining-<period>` as they stand before this request */
  headers(): Record<string, string> {
    const out: Record<string, string> = {};
    this.limits.forEach((p, i) => {
      out[`X-AI-RateLimit-Limit-${p.period}`] = String(p.limit);
      out[`X-AI-RateLimit-Remaining-${p.period}`] = String(Math.max(0, p.limit - this.used[i]!));
    });
    return out;
  }

  /** the 429 answer when a period's tokens are spent, before the provider is called; null while tokens remain */
  refusal(): PluginResponse | null {
    const spent = this.limits.filter((p, i) => this.used[i]! >= p.limit);
    if (spent.length === 0) return null;
    const now = Date.now();
    const retryAfter = Math.max(...spent.map((p) => secondsToReset(p.window, now)));
    return { status: 429, body: { message: 'AI token rate limit exceeded' }, headers: { ...this.headers(), 'Retry-After': String(retryAfter) } };
  }

  /** spends the tokens a finished call used */
  spend(tokens: number): Promise<void> {
    if (tokens <= 0) return Promise.resolve();
    return this.counter.add(this.scope, this.limits, tokens);
  }
}
