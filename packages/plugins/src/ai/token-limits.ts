import { z } from 'zod';
import type { PluginContext, PluginResponse, PluginRuntime } from '../contract';
import { currentWindow, secondsToReset, type CountingWindow } from '../rate-limiting/windows';

export const TOKEN_PERIODS = ['minute', 'hour', 'day'] as const;
type TokenPeriod = (typeof TOKEN_PERIODS)[number];

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

interface PeriodState {
  period: TokenPeriod;
  limit: number;
  window: CountingWindow;
  key: string;
  used: number;
}

/** Token counts per window: `used` reads them before the call, `add` spends a finished call's tokens. */
interface TokenCounter {
  used(keys: readonly string[]): Promise<number[]>;
  add(keys: readonly string[], ttlsMs: readonly number[], tokens: number): Promise<void>;
}

class LocalTokenCounter implements TokenCounter {
  private readonly counts = new Map<string, { value: number; expires: number }>();

  used(keys: readonly string[]): Promise<number[]> {
    const now = Date.now();
    return Promise.resolve(keys.map((key) => {
      const entry = this.counts.get(key);
      return entry !== undefined && entry.expires > now ? entry.value : 0;
    }));
  }

  add(keys: readonly string[], ttlsMs: readonly number[], tokens: number): Promise<void> {
    const now = Date.now();
    // expired windows are swept on each write: the map holds the live windows only
    for (const [key, entry] of this.counts) if (entry.expires <= now) this.counts.delete(key);
    keys.forEach((key, i) => {
      const entry = this.counts.get(key);
      if (entry !== undefined) entry.value += tokens;
      else this.counts.set(key, { value: tokens, expires: now + ttlsMs[i]! });
    });
    return Promise.resolve();
  }
}

class RedisTokenCounter implements TokenCounter {
  constructor(private readonly runtime: PluginRuntime) {}

  async used(keys: readonly string[]): Promise<number[]> {
    const values = await this.runtime.redis!.mget(...keys.map((k) => `${this.runtime.redisPrefix ?? ''}${k}`));
    return values.map((v) => Number(v ?? 0));
  }

  async add(keys: readonly string[], ttlsMs: readonly number[], tokens: number): Promise<void> {
    const tx = this.runtime.redis!.multi();
    keys.forEach((key, i) => {
      const full = `${this.runtime.redisPrefix ?? ''}${key}`;
      tx.incrby(full, tokens);
      tx.pexpire(full, ttlsMs[i]!);
    });
    await tx.exec();
  }
}

const localCounters = new WeakMap<PluginRuntime, LocalTokenCounter>();

function counterFor(runtime: PluginRuntime, policy: TokenLimits['policy']): TokenCounter | null {
  if (policy === 'redis') return runtime.redis !== undefined ? new RedisTokenCounter(runtime) : null;
  let counter = localCounters.get(runtime);
  if (counter === undefined) localCounters.set(runtime, (counter = new LocalTokenCounter()));
  return counter;
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
    private readonly periods: PeriodState[],
  ) {}

  /** the budget of this request, or null when no limit applies (or `redis` has no Redis: limits are not enforced) */
  static async open(ctx: PluginContext, limits: TokenLimits | null, pluginId: string): Promise<TokenBudget | null> {
    if (limits === null) return null;
    const counter = counterFor(ctx.runtime, limits.policy);
    if (counter === null) return null;
    const now = Date.now();
    const scope = identifierOf(ctx, limits);
    const periods: PeriodState[] = [];
    for (const period of TOKEN_PERIODS) {
      const max = limits[period];
      if (max === null) continue;
      const window = currentWindow(period, now);
      periods.push({ period, limit: max, window, key: `ai-tokens:${pluginId}:${scope}:${period}:${window.start}`, used: 0 });
    }
    if (periods.length === 0) return null;
    const used = await counter.used(periods.map((p) => p.key));
    periods.forEach((p, i) => (p.used = used[i]!));
    return new TokenBudget(counter, periods);
  }

  /** `X-AI-RateLimit-Limit-<period>` and `-Remaining-<period>` as they stand before this request */
  headers(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const p of this.periods) {
      out[`X-AI-RateLimit-Limit-${p.period}`] = String(p.limit);
      out[`X-AI-RateLimit-Remaining-${p.period}`] = String(Math.max(0, p.limit - p.used));
    }
    return out;
  }

  /** the 429 answer when a period's tokens are spent, before the provider is called; null while tokens remain */
  refusal(): PluginResponse | null {
    const spent = this.periods.filter((p) => p.used >= p.limit);
    if (spent.length === 0) return null;
    const now = Date.now();
    const retryAfter = Math.max(...spent.map((p) => secondsToReset(p.window, now)));
    return { status: 429, body: { message: 'AI token rate limit exceeded' }, headers: { ...this.headers(), 'Retry-After': String(retryAfter) } };
  }

  /** spends the tokens a finished call used */
  spend(tokens: number): Promise<void> {
    if (tokens <= 0) return Promise.resolve();
    const now = Date.now();
    return this.counter.add(this.periods.map((p) => p.key), this.periods.map((p) => Math.max(1, p.window.end - now)), tokens);
  }
}
