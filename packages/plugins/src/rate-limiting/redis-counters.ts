import { createHash } from 'node:crypto';
import type { PeriodLimit, Tally } from './tally';

/** The part of an ioredis client the redis policy uses. */
export interface RedisScriptRunner {
  /** ioredis connection state; nothing is sent while a lost connection is being re-established */
  readonly status: string;
  evalsha(sha1: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>;
}

/**
 * One round trip, atomic: read every period's counter; when one is at its limit, count nothing and answer the
 * counts (blocked); otherwise increment them all, start each new counter's expiry, and answer the new counts.
 * KEYS: one counter per period. ARGV: the limits, then the expiries in milliseconds. Reply: {blocked, count...}.
 */
export const TAKE_SCRIPT = `
local n = #KEYS
local counts = {}
local blocked = 0
for i = 1, n do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  counts[i] = count
  if count >= tonumber(ARGV[i]) then blocked = 1 end
end
if blocked == 0 then
  for i = 1, n do
    local count = redis.call('INCR', KEYS[i])
    counts[i] = count
    if count == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[n + i]) end
  end
end
table.insert(counts, 1, blocked)
return counts
`;

const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

/** ioredis states of a connection that was lost (or closed for good) */
const LOST = new Set(['reconnecting', 'close', 'end']);

/** Raised when the counters cannot be reached; the handler decides what fault_tolerant makes of it. */
export class CounterStoreError extends Error {
  override readonly name = 'CounterStoreError';
}

/**
 * Every counter of one request has the same hash tag (`{scope}`), so the script's keys live in one slot if the
 * Redis is a cluster. The window start is in the key: a counter is never reused by a later window.
 */
export function counterKey(prefix: string, scope: string, limit: PeriodLimit): string {
  return `${prefix}ratelimit:{${scope}}:${limit.period}:${limit.window.start}`;
}

function parseReply(reply: unknown, expected: number): Tally {
  if (!Array.isArray(reply) || reply.length !== expected + 1) throw new CounterStoreError('unexpected reply from the rate-limiting script');
  const counts: number[] = new Array(expected);
  for (let i = 0; i < expected; i++) counts[i] = Number(reply[i + 1]);
  return { blocked: Number(reply[0]) === 1, counts };
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** Counts one request in Redis (see TAKE_SCRIPT); rejects with CounterStoreError when Redis does not answer in time. */
export async function takeFromRedis(
  client: RedisScriptRunner,
  prefix: string,
  scope: string,
  limits: readonly PeriodLimit[],
  nowMs: number,
  timeoutMs: number,
): Promise<Tally> {
  // a client that lost its connection would queue the command until it is back: fail at once instead (a client
  // still opening its first connection is waited for, within the timeout)
  if (LOST.has(client.status)) throw new CounterStoreError(`Redis is not connected (${client.status})`);
  const n = limits.length;
  const args: Array<string | number> = new Array(n * 3);
  for (let i = 0; i < n; i++) {
    const limit = limits[i]!;
    args[i] = counterKey(prefix, scope, limit);
    args[n + i] = limit.limit;
    args[2 * n + i] = limit.window.end - nowMs + 1000;
  }
  return withTimeout(
    runScript(client, TAKE_SCRIPT, TAKE_SHA, n, args).then((reply) => parseReply(reply, n)),
    timeoutMs,
  );
}

function runScript(client: RedisScriptRunner, script: string, sha: string, numkeys: number, args: Array<string | number>): Promise<unknown> {
  return client.evalsha(sha, numkeys, ...args).catch((err: unknown) => {
    if (isNoScript(err)) return client.eval(script, numkeys, ...args);
    throw err;
  });
}

/** Settles as `run`, or rejects with CounterStoreError when it takes longer than `timeoutMs`. */
async function withTimeout<T>(run: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CounterStoreError(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([run, timeout]);
  } catch (err) {
    run.catch(() => undefined);
    throw err instanceof CounterStoreError ? err : new CounterStoreError(err instanceof Error ? err.message : String(err));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads the counters of `limits` under `scope` without counting (0 for a counter not started); one round trip.
 * Reply: `{count...}`.
 */
export const PEEK_SCRIPT = `
local counts = {}
for i = 1, #KEYS do counts[i] = tostring(tonumber(redis.call('GET', KEYS[i]) or '0')) end
return counts
`;
const PEEK_SHA = createHash('sha1').update(PEEK_SCRIPT).digest('hex');

/** Adds ARGV[1] to every counter in KEYS, starting each new counter's expiry (ARGV[1 + i], milliseconds). */
export const ADD_SCRIPT = `
for i = 1, #KEYS do
  local existed = redis.call('EXISTS', KEYS[i])
  redis.call('INCRBYFLOAT', KEYS[i], ARGV[1])
  if existed == 0 then redis.call('PEXPIRE', KEYS[i], ARGV[1 + i]) end
end
return #KEYS
`;
const ADD_SHA = createHash('sha1').update(ADD_SCRIPT).digest('hex');

/** The counts of `limits` under `scope` in Redis, without counting anything (response-ratelimiting's usage). */
export async function peekInRedis(client: RedisScriptRunner, prefix: string, scope: string, limits: readonly PeriodLimit[], timeoutMs: number): Promise<number[]> {
  if (LOST.has(client.status)) throw new CounterStoreError(`Redis is not connected (${client.status})`);
  const keys = limits.map((limit) => counterKey(prefix, scope, limit));
  const reply = await withTimeout(runScript(client, PEEK_SCRIPT, PEEK_SHA, keys.length, keys), timeoutMs);
  if (!Array.isArray(reply) || reply.length !== keys.length) throw new CounterStoreError('unexpected reply from the counters script');
  return reply.map((count) => Number(count));
}

/** Adds `amount` to every counter of `limits` under `scope` in Redis (response-ratelimiting's increments). */
export async function addInRedis(client: RedisScriptRunner, prefix: string, scope: string, limits: readonly PeriodLimit[], amount: number, nowMs: number, timeoutMs: number): Promise<void> {
  if (LOST.has(client.status)) throw new CounterStoreError(`Redis is not connected (${client.status})`);
  const keys = limits.map((limit) => counterKey(prefix, scope, limit));
  const expiries = limits.map((limit) => limit.window.end - nowMs + 1000);
  await withTimeout(runScript(client, ADD_SCRIPT, ADD_SHA, keys.length, [...keys, amount, ...expiries]), timeoutMs);
}
