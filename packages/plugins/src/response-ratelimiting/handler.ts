import type { PluginContext, PluginLogger, PluginResponse, UpstreamResponse } from '../contract';
import type { ResponseRateLimitingConfig } from './schema';
import { identifierOf, limitsAt, parseIncrements, UsageCounters, type NamedUsage } from './usage';

const UNEXPECTED_ERROR: PluginResponse = Object.freeze({ status: 500, body: Object.freeze({ message: 'An unexpected error occurred' }) });

/** how often failing counters are reported (ms) */
const FAILURE_LOG_INTERVAL = 10_000;

/** What the access hook leaves for the response and log hooks of the same request. */
interface RequestUsage {
  scope: string;
  nowMs: number;
  usage: NamedUsage[];
  /** what the upstream declared, once its response came */
  increments: Map<string, number> | null;
  /** the response was refused: nothing is counted */
  stopped: boolean;
}

const LOCALS_KEY = 'response-ratelimiting';

function stderrLog(): PluginLogger {
  return { error: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'error', message, ...detail })}\n`) };
}

function isThenable<T>(value: unknown): value is Promise<T> {
  return value instanceof Promise;
}

export interface ResponseRateLimiter {
  access(ctx: PluginContext, config: ResponseRateLimitingConfig): PluginResponse | void | Promise<PluginResponse | void>;
  response(ctx: PluginContext, config: ResponseRateLimitingConfig, res: UpstreamResponse): void;
  log(ctx: PluginContext, config: ResponseRateLimitingConfig): void | Promise<void>;
  close(): void;
}

/**
 * Kong's response-ratelimiting over rate-limiting's counters. On the request: reads what each named limit has left
 * (per period), refuses with 429 when `block_on_first_violation` and one is spent, and tells the upstream what is left
 * (`X-RateLimit-Remaining-<name>`). On the response: reads the usage the upstream declares in `header_name`
 * (`video=1, image=2`), sets `X-RateLimit-Limit-<name>-<period>` / `-Remaining-<name>-<period>` for the client, strips
 * the header, and answers 429 without a body when the upstream spent a limit that had nothing left. At the end of the
 * exchange, the declared usage is counted.
 */
export function createResponseRateLimiter(counters = new UsageCounters(), now: () => number = Date.now): ResponseRateLimiter {
  let lastFailureLog = -Infinity;

  function unavailable(ctx: PluginContext, config: ResponseRateLimitingConfig, err: unknown): PluginResponse | void {
    const nowMs = now();
    if (nowMs - lastFailureLog >= FAILURE_LOG_INTERVAL) {
      (ctx.runtime.log ?? stderrLog()).error('response-ratelimiting: failed to get usage', { plugin_id: ctx.pluginId, error: err instanceof Error ? err.message : String(err) });
      lastFailureLog = nowMs;
    }
    return config.fault_tolerant ? undefined : UNEXPECTED_ERROR;
  }

  function decide(ctx: PluginContext, config: ResponseRateLimitingConfig, state: RequestUsage): PluginResponse | void {
    for (const named of state.usage) {
      let least = Infinity;
      for (const remaining of named.remaining) {
        if (config.block_on_first_violation && remaining <= 0) {
          return { status: 429, body: { message: `API rate limit exceeded for '${named.name}'` } };
        }
        least = Math.min(least, remaining);
      }
      const header = `x-ratelimit-remaining-${named.name}`;
      ctx.upstream.setHeader(header, String(least));
      if (!config.hide_client_headers) ctx.response?.setHeader(header, String(least));
    }
    ctx.locals?.set(LOCALS_KEY, state);
  }

  return {
    access(ctx, config) {
      const nowMs = now();
      const scope = `${ctx.pluginId ?? 'response-ratelimiting'}:${identifierOf(ctx, config)}`;
      const named = limitsAt(config, nowMs);
      try {
        const counts = named.map(({ name, limits }) => counters.peek(ctx, config, `${scope}:${name}`, limits));
        const settle = (all: number[][]) => {
          const usage = named.map((n, i) => ({ ...n, remaining: n.limits.map((l, j) => l.limit - all[i]![j]!) }));
          return decide(ctx, config, { scope, nowMs, usage, increments: null, stopped: false });
        };
        if (!counts.some((c) => isThenable(c))) return settle(counts as number[][]);
        return Promise.all(counts).then(settle, (err: unknown) => unavailable(ctx, config, err));
      } catch (err) {
        return unavailable(ctx, config, err);
      }
    },

    response(ctx, config, res) {
      const headerName = config.header_name.toLowerCase();
      const increments = parseIncrements(res.headers[headerName], config);
      const state = ctx.locals?.get(LOCALS_KEY) as RequestUsage | undefined;
      if (state === undefined) return;
      state.increments = increments;
      // a refused response spends nothing: its headers show what was left before it
      const stop = state.usage.some((named) => (increments.get(named.name) ?? 0) > 0 && named.remaining.some((left) => left <= 0));
      if (!config.hide_client_headers) {
        for (const named of state.usage) {
          const spent = stop ? 0 : (increments.get(named.name) ?? 0);
          for (let i = 0; i < named.limits.length; i++) {
            const { period, limit } = named.limits[i]!;
            res.headers[`x-ratelimit-limit-${named.name}-${period}`] = String(limit);
            res.headers[`x-ratelimit-remaining-${named.name}-${period}`] = String(Math.max(0, named.remaining[i]! - spent));
          }
        }
      }
      delete res.headers[headerName];
      if (!stop) return;
      state.stopped = true;
      res.status = 429;
      res.transformBody(() => Buffer.alloc(0));
    },

    log(ctx, config) {
      const state = ctx.locals?.get(LOCALS_KEY) as RequestUsage | undefined;
      if (state === undefined || state.stopped || state.increments === null) return;
      const pending: Array<Promise<void>> = [];
      for (const named of state.usage) {
        const amount = state.increments.get(named.name);
        if (amount === undefined || amount === 0) continue;
        const added = counters.add(ctx, config, `${state.scope}:${named.name}`, named.limits, amount, state.nowMs);
        if (added instanceof Promise) pending.push(added);
      }
      if (pending.length > 0) return Promise.all(pending).then(() => undefined);
    },

    close() {
      counters.close();
    },
  };
}
