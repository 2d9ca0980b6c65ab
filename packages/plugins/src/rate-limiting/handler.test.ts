import { describe, expect, it, jest } from '@jest/globals';
import { validateWith, type Consumer, type Service } from '@gatehouse/core';
import type { CredentialRef, PluginContext, PluginLogger, PluginResponse } from '../contract';
import { createRateLimiter } from './handler';
import { rateLimiting } from './index';
import { LocalCounters } from './local-counters';
import type { RedisScriptRunner } from './redis-counters';
import { checkRateLimitingConfig, periodOrderError, rateLimitingConfigSchema, type RateLimitingConfig } from './schema';
import { currentWindow, secondsToReset, windowOf } from './windows';

const T0 = Date.UTC(2024, 1, 29, 13, 45, 30, 250); // 2024-02-29T13:45:30.250Z, a leap day

const consumer = (id: string): Consumer => ({ id, username: id, custom_id: null, tags: null, created_at: 0, updated_at: 0 });
const alice = consumer('11111111-1111-4111-8111-111111111111');
const bob = consumer('22222222-2222-4222-8222-222222222222');
const service = { id: '33333333-3333-4333-8333-333333333333' } as Service;
const otherService = { id: '44444444-4444-4444-8444-444444444444' } as Service;

interface Who {
  consumer?: Consumer | null;
  credential?: CredentialRef | null;
  ip?: string;
  headers?: Record<string, string>;
  path?: string;
  service?: Service | null;
  pluginId?: string;
  runtime?: PluginContext['runtime'];
}

interface Call {
  response: PluginResponse | null;
  headers: Record<string, string>;
}

function contextFor(who: Who, headers: Record<string, string>): PluginContext {
  return {
    req: {
      method: 'GET',
      path: who.path ?? '/',
      headers: who.headers ?? {},
      query: new URLSearchParams(),
      clientIp: who.ip ?? '10.0.0.1',
      scheme: 'http',
      readBody: async () => Buffer.alloc(0),
    },
    upstream: { setHeader: () => undefined, removeHeader: () => undefined, removeQueryArg: () => undefined, setBody: () => undefined },
    response: { setHeader: (name, value) => void (headers[name] = value) },
    route: null,
    service: who.service ?? null,
    consumer: who.consumer ?? null,
    credential: who.credential ?? null,
    anonymous: false,
    index: undefined,
    runtime: who.runtime ?? {},
    pluginId: who.pluginId ?? 'plugin-1',
  };
}

/** A limiter on a clock the test moves. */
function limiter() {
  const clock = { now: T0 };
  const access = createRateLimiter({ now: () => clock.now, local: new LocalCounters() });
  const call = async (config: RateLimitingConfig, who: Who = {}): Promise<Call> => {
    const headers: Record<string, string> = {};
    const response = (await access(contextFor(who, headers), config)) ?? null;
    return { response, headers };
  };
  return { clock, call };
}

const parse = (config: Record<string, unknown>) => rateLimitingConfigSchema.parse(config);

async function spend(call: (c: RateLimitingConfig, w?: Who) => Promise<Call>, config: RateLimitingConfig, times: number, who: Who = {}): Promise<Call[]> {
  const calls: Call[] = [];
  for (let i = 0; i < times; i++) calls.push(await call(config, who));
  return calls;
}

describe('rate-limiting config', () => {
  it("has Kong's defaults", () => {
    expect(parse({ minute: 5 })).toEqual({
      second: null,
      minute: 5,
      hour: null,
      day: null,
      month: null,
      year: null,
      limit_by: 'consumer',
      header_name: null,
      path: null,
      policy: 'local',
      fault_tolerant: true,
      redis: { host: null, port: 6379, timeout: 2000, username: null, password: null, database: 0, ssl: false, ssl_verify: false, server_name: null },
      hide_client_headers: false,
      error_code: 429,
      error_message: 'API rate limit exceeded',
      sync_rate: -1,
    });
  });

  it('is priority 910, not an authentication plugin, and may be scoped to a consumer', () => {
    expect(rateLimiting).toMatchObject({ name: 'rate-limiting', priority: 910, auth: false, noConsumer: false });
  });

  it('needs limits greater than 0', () => {
    expect(() => validateWith(rateLimitingConfigSchema, { minute: 0 })).toThrow(expect.objectContaining({ fields: { minute: 'value must be greater than 0' } }));
    expect(() => validateWith(rateLimitingConfigSchema, { hour: -1 })).toThrow(expect.objectContaining({ fields: { hour: 'value must be greater than 0' } }));
  });

  it('needs at least one limit', () => {
    expect(checkRateLimitingConfig(parse({}))).toEqual({
      '@entity': ["at least one of these fields must be non-empty: 'config.second', 'config.minute', 'config.hour', 'config.day', 'config.month', 'config.year'"],
    });
    expect(checkRateLimitingConfig(parse({ year: 1 }))).toBeNull();
  });

  it('refuses a longer period with a lower limit, with Kong message at the config record', () => {
    expect(periodOrderError({ minute: 10, hour: 5 })).toBe('The limit for hour(5.0) cannot be lower than the limit for minute(10.0)');
    expect(periodOrderError({ second: 20, hour: 10, day: 100 })).toBe('The limit for hour(10.0) cannot be lower than the limit for second(20.0)');
    expect(periodOrderError({ second: 1, minute: 1, hour: 1 })).toBeNull();
    expect(() => validateWith(rateLimitingConfigSchema, { minute: 10, hour: 5 })).toThrow(
      expect.objectContaining({ message: 'schema violation (The limit for hour(5.0) cannot be lower than the limit for minute(10.0))' }),
    );
    expect(rateLimitingConfigSchema.safeParse({ minute: 10, hour: 10, year: 9.5 }).error?.issues[0]?.message).toBe(
      'The limit for year(9.5) cannot be lower than the limit for minute(10.0)',
    );
  });

  it('requires header_name with limit_by header, and path with limit_by path', () => {
    expect(checkRateLimitingConfig(parse({ minute: 1, limit_by: 'header' }))).toEqual({
      '@entity': ["failed conditional validation given value of field 'config.limit_by'"],
      header_name: 'required field missing',
    });
    expect(checkRateLimitingConfig(parse({ minute: 1, limit_by: 'path' }))).toEqual({
      '@entity': ["failed conditional validation given value of field 'config.limit_by'"],
      path: 'required field missing',
    });
    expect(checkRateLimitingConfig(parse({ minute: 1, limit_by: 'header', header_name: 'x-tenant' }))).toBeNull();
  });

  it("refuses the cluster policy with an explanation, and other values with Kong's enum message", () => {
    expect(() => validateWith(rateLimitingConfigSchema, { minute: 1, policy: 'cluster' })).toThrow(
      expect.objectContaining({ fields: { policy: expect.stringContaining("expected one of: local, redis ('cluster' keeps counters in the database") } }),
    );
    expect(() => validateWith(rateLimitingConfigSchema, { minute: 1, policy: 'memcached' })).toThrow(
      expect.objectContaining({ fields: { policy: 'expected one of: local, redis' } }),
    );
    expect(() => validateWith(rateLimitingConfigSchema, { minute: 1, limit_by: 'cookie' })).toThrow(
      expect.objectContaining({ fields: { limit_by: 'expected one of: consumer, credential, ip, service, header, path' } }),
    );
  });

  it('accepts its own Redis and sync_rate', () => {
    const config = parse({ minute: 1, policy: 'redis', sync_rate: 10, redis: { host: 'redis.internal', port: 6380, password: 'pw', database: 2 } });
    expect(config.redis).toMatchObject({ host: 'redis.internal', port: 6380, password: 'pw', database: 2, timeout: 2000 });
    expect(() => validateWith(rateLimitingConfigSchema, { minute: 1, redis: { hostname: 'x' } })).toThrow(expect.objectContaining({ fields: { redis: { hostname: 'unknown field' } } }));
  });
});

describe('rate-limiting windows', () => {
  it('aligns seconds, minutes, hours and days on the epoch', () => {
    expect(windowOf('second', T0)).toEqual({ start: Date.UTC(2024, 1, 29, 13, 45, 30), end: Date.UTC(2024, 1, 29, 13, 45, 31) });
    expect(windowOf('minute', T0)).toEqual({ start: Date.UTC(2024, 1, 29, 13, 45), end: Date.UTC(2024, 1, 29, 13, 46) });
    expect(windowOf('hour', T0)).toEqual({ start: Date.UTC(2024, 1, 29, 13), end: Date.UTC(2024, 1, 29, 14) });
    expect(windowOf('day', T0)).toEqual({ start: Date.UTC(2024, 1, 29), end: Date.UTC(2024, 2, 1) });
  });

  it('follows the UTC calendar for months and years', () => {
    expect(windowOf('month', T0)).toEqual({ start: Date.UTC(2024, 1, 1), end: Date.UTC(2024, 2, 1) });
    expect(windowOf('month', Date.UTC(2024, 11, 31, 23, 59, 59))).toEqual({ start: Date.UTC(2024, 11, 1), end: Date.UTC(2025, 0, 1) });
    expect(windowOf('year', T0)).toEqual({ start: Date.UTC(2024, 0, 1), end: Date.UTC(2025, 0, 1) });
  });

  it('starts a window exactly at its boundary', () => {
    const boundary = Date.UTC(2024, 1, 29, 14);
    expect(windowOf('hour', boundary - 1).end).toBe(boundary);
    expect(windowOf('hour', boundary).start).toBe(boundary);
    expect(currentWindow('hour', boundary - 1)).not.toEqual(currentWindow('hour', boundary));
  });

  it('counts seconds to reset up, never below 1', () => {
    const minute = windowOf('minute', T0);
    expect(secondsToReset(minute, T0)).toBe(30);
    expect(secondsToReset(minute, minute.end - 1)).toBe(1);
    expect(secondsToReset(minute, minute.start)).toBe(60);
  });
});

describe('rate-limiting local policy', () => {
  it("counts in the node's store when the runtime gives one (proxy workers), answering when it does", async () => {
    const { call } = limiter();
    const node = new LocalCounters();
    const store = { take: jest.fn((key: string, limits: Parameters<LocalCounters['take']>[1]) => Promise.resolve(node.take(key, limits))) };
    const config = parse({ minute: 2, limit_by: 'ip' });
    const calls = await spend(call, config, 3, { runtime: { rateLimitCounters: store } });
    expect(calls.map((c) => c.response?.status ?? 200)).toEqual([200, 200, 429]);
    expect(calls[1]!.headers['x-ratelimit-remaining-minute']).toBe('0');
    expect(store.take).toHaveBeenCalledTimes(3);
    expect(node.size).toBe(1);
    const failing = { take: () => Promise.reject(new Error('primary gone')) };
    const log = { error: jest.fn() };
    expect((await call(parse({ minute: 2, fault_tolerant: false }), { runtime: { rateLimitCounters: failing, log } })).response?.status).toBe(500);
    expect((await call(parse({ minute: 2 }), { runtime: { rateLimitCounters: failing, log } })).response).toBeNull();
  });

  it('lets the limit through and refuses the next one with 429 and Retry-After', async () => {
    const { call } = limiter();
    const config = parse({ minute: 3, limit_by: 'ip' });
    const calls = await spend(call, config, 3);
    expect(calls.map((c) => c.response)).toEqual([null, null, null]);
    expect(calls.map((c) => c.headers['x-ratelimit-remaining-minute'])).toEqual(['2', '1', '0']);
    const refused = await call(config);
    expect(refused.response).toEqual({
      status: 429,
      body: { message: 'API rate limit exceeded' },
      headers: {
        'x-ratelimit-limit-minute': '3',
        'x-ratelimit-remaining-minute': '0',
        'ratelimit-limit': '3',
        'ratelimit-remaining': '0',
        'ratelimit-reset': '30',
        'retry-after': '30',
      },
    });
    expect(refused.headers).toEqual({});
  });

  it('starts over in the next window', async () => {
    const { clock, call } = limiter();
    const config = parse({ second: 1, limit_by: 'ip' });
    expect((await call(config)).response).toBeNull();
    expect((await call(config)).response?.status).toBe(429);
    clock.now += 750;
    expect((await call(config)).response).toBeNull();
  });

  it('counts every period and refuses on the first one used up; refused requests spend nothing', async () => {
    const { clock, call } = limiter();
    const config = parse({ second: 2, minute: 3, limit_by: 'ip' });
    await spend(call, config, 2);
    const second = await call(config);
    expect(second.response?.status).toBe(429);
    expect(second.response?.headers).toMatchObject({ 'x-ratelimit-remaining-second': '0', 'x-ratelimit-remaining-minute': '1', 'retry-after': '1' });
    clock.now += 1000;
    const third = await call(config);
    expect(third.response).toBeNull();
    expect(third.headers).toMatchObject({ 'x-ratelimit-remaining-second': '1', 'x-ratelimit-remaining-minute': '0' });
    clock.now += 1000;
    const blocked = await call(config);
    expect(blocked.response?.headers).toMatchObject({ 'x-ratelimit-remaining-second': '2', 'x-ratelimit-remaining-minute': '0', 'ratelimit-reset': '28', 'retry-after': '28' });
  });

  it('reports the most restrictive period in RateLimit-*, the longer one on a tie', async () => {
    const { call } = limiter();
    const { headers } = await call(parse({ second: 5, minute: 10, hour: 100, limit_by: 'ip' }));
    expect(headers).toEqual({
      'x-ratelimit-limit-second': '5',
      'x-ratelimit-remaining-second': '4',
      'x-ratelimit-limit-minute': '10',
      'x-ratelimit-remaining-minute': '9',
      'x-ratelimit-limit-hour': '100',
      'x-ratelimit-remaining-hour': '99',
      'ratelimit-limit': '5',
      'ratelimit-remaining': '4',
      'ratelimit-reset': '1',
    });
    const tie = await call(parse({ minute: 2, hour: 2, limit_by: 'ip' }), { pluginId: 'plugin-2' });
    expect(tie.headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '1', 'ratelimit-reset': String(secondsToReset(windowOf('hour', T0), T0)) });
  });

  it('hides every client header, Retry-After included, with hide_client_headers', async () => {
    const { call } = limiter();
    const config = parse({ minute: 1, limit_by: 'ip', hide_client_headers: true });
    expect(await call(config)).toEqual({ response: null, headers: {} });
    expect((await call(config)).response).toEqual({ status: 429, body: { message: 'API rate limit exceeded' } });
  });

  it('answers with error_code and error_message', async () => {
    const { call } = limiter();
    const config = parse({ minute: 1, limit_by: 'ip', error_code: 503, error_message: 'Slow down' });
    await call(config);
    expect((await call(config)).response).toMatchObject({ status: 503, body: { message: 'Slow down' } });
  });

  it('keeps separate budgets per plugin configuration', async () => {
    const { call } = limiter();
    const config = parse({ minute: 1, limit_by: 'ip' });
    expect((await call(config, { pluginId: 'a' })).response).toBeNull();
    expect((await call(config, { pluginId: 'b' })).response).toBeNull();
    expect((await call(config, { pluginId: 'a' })).response?.status).toBe(429);
  });
});

describe('rate-limiting limit_by', () => {
  const credential = (id: string | null, consumerId: string | null = null): CredentialRef => ({ id, identifier: 'x', consumerId });

  /** true when the two requests spend the same budget of a limit of 1 */
  async function shareBudget(config: Record<string, unknown>, first: Who, second: Who): Promise<boolean> {
    const { call } = limiter();
    const parsed = parse({ minute: 1, ...config });
    expect((await call(parsed, first)).response).toBeNull();
    return (await call(parsed, second)).response !== null;
  }

  it('consumer: one budget per consumer whatever the IP, else the credential, else the IP', async () => {
    expect(await shareBudget({}, { consumer: alice, ip: '1.1.1.1' }, { consumer: alice, ip: '2.2.2.2' })).toBe(true);
    expect(await shareBudget({}, { consumer: alice }, { consumer: bob })).toBe(false);
    expect(await shareBudget({}, { credential: credential('cred-1'), ip: '1.1.1.1' }, { credential: credential('cred-1'), ip: '2.2.2.2' })).toBe(true);
    expect(await shareBudget({}, { ip: '1.1.1.1' }, { ip: '1.1.1.1' })).toBe(true);
    expect(await shareBudget({}, { ip: '1.1.1.1' }, { ip: '2.2.2.2' })).toBe(false);
    // a credential without id (ldap-auth) falls back to the IP
    expect(await shareBudget({}, { credential: credential(null), ip: '1.1.1.1' }, { credential: credential(null), ip: '2.2.2.2' })).toBe(false);
  });

  it('credential: one budget per credential, else the IP', async () => {
    expect(await shareBudget({ limit_by: 'credential' }, { consumer: alice, credential: credential('c-1') }, { consumer: bob, credential: credential('c-1') })).toBe(true);
    expect(await shareBudget({ limit_by: 'credential' }, { consumer: alice, credential: credential('c-1') }, { consumer: alice, credential: credential('c-2') })).toBe(false);
    expect(await shareBudget({ limit_by: 'credential' }, { consumer: alice, ip: '1.1.1.1' }, { consumer: alice, ip: '2.2.2.2' })).toBe(false);
  });

  it('ip: one budget per client IP, whoever the consumer', async () => {
    expect(await shareBudget({ limit_by: 'ip' }, { consumer: alice, ip: '1.1.1.1' }, { consumer: bob, ip: '1.1.1.1' })).toBe(true);
    expect(await shareBudget({ limit_by: 'ip' }, { consumer: alice, ip: '1.1.1.1' }, { consumer: alice, ip: '2.2.2.2' })).toBe(false);
  });

  it('service: one budget per service', async () => {
    expect(await shareBudget({ limit_by: 'service' }, { service, ip: '1.1.1.1' }, { service, ip: '2.2.2.2' })).toBe(true);
    expect(await shareBudget({ limit_by: 'service' }, { service }, { service: otherService })).toBe(false);
  });

  it('header: one budget per header value, else the IP', async () => {
    const config = { limit_by: 'header', header_name: 'X-Tenant' };
    expect(await shareBudget(config, { headers: { 'x-tenant': 'acme' }, ip: '1.1.1.1' }, { headers: { 'x-tenant': 'acme' }, ip: '2.2.2.2' })).toBe(true);
    expect(await shareBudget(config, { headers: { 'x-tenant': 'acme' } }, { headers: { 'x-tenant': 'globex' } })).toBe(false);
    expect(await shareBudget(config, { ip: '1.1.1.1' }, { ip: '2.2.2.2' })).toBe(false);
  });

  it('path: one budget for exactly that path, the IP elsewhere', async () => {
    const config = { limit_by: 'path', path: '/login' };
    expect(await shareBudget(config, { path: '/login', ip: '1.1.1.1' }, { path: '/login', ip: '2.2.2.2' })).toBe(true);
    expect(await shareBudget(config, { path: '/other', ip: '1.1.1.1' }, { path: '/other', ip: '2.2.2.2' })).toBe(false);
  });
});

describe('rate-limiting redis policy when Redis fails', () => {
  const failing = (status: string, reply: () => Promise<unknown>): RedisScriptRunner => ({ status, evalsha: reply, eval: reply });
  const quiet = () => {
    const logged: Array<Record<string, unknown> | undefined> = [];
    const log: PluginLogger = { error: (_message, detail) => void logged.push(detail) };
    return { log, logged };
  };

  it('fault_tolerant: lets the request through without headers, and logs once per interval', async () => {
    const { clock, call } = limiter();
    const { log, logged } = quiet();
    const redis = failing('ready', () => Promise.reject(new Error('READONLY You cannot write against a read only replica')));
    const config = parse({ minute: 1, policy: 'redis' });
    const runtime = { redis: redis as never, log };
    for (let i = 0; i < 3; i++) expect(await call(config, { runtime })).toEqual({ response: null, headers: {} });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ plugin_id: 'plugin-1', error: 'READONLY You cannot write against a read only replica', fault_tolerant: true });
    clock.now += 10_000;
    await call(config, { runtime });
    expect(logged).toHaveLength(2);
    expect(logged[1]).toMatchObject({ failures_since_last_report: 2 });
  });

  it('not fault tolerant: 500 An unexpected error occurred', async () => {
    const { call } = limiter();
    const { log } = quiet();
    const redis = failing('ready', () => Promise.reject(new Error('connection lost')));
    const config = parse({ minute: 1, policy: 'redis', fault_tolerant: false });
    expect((await call(config, { runtime: { redis: redis as never, log } })).response).toEqual({ status: 500, body: { message: 'An unexpected error occurred' } });
  });

  it('does not wait for a disconnected client, nor longer than redis.timeout for an answer', async () => {
    const { call } = limiter();
    const { log, logged } = quiet();
    let sent = 0;
    const reconnecting = failing('reconnecting', () => {
      sent++;
      return Promise.resolve([0, 1]);
    });
    const strict = parse({ minute: 1, policy: 'redis', fault_tolerant: false, redis: { timeout: 50 } });
    expect((await call(strict, { runtime: { redis: reconnecting as never, log } })).response?.status).toBe(500);
    expect(sent).toBe(0);
    const silent = failing('ready', () => new Promise(() => undefined));
    // on a fake clock: still waiting 1 ms before redis.timeout, answered at redis.timeout
    jest.useFakeTimers();
    try {
      let answer: Awaited<ReturnType<typeof call>> | undefined;
      const pending = call(strict, { runtime: { redis: silent as never, log } }).then((a) => (answer = a));
      await jest.advanceTimersByTimeAsync(49);
      expect(answer).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      await pending;
      expect(answer?.response?.status).toBe(500);
    } finally {
      jest.useRealTimers();
    }
    expect(logged[0]).toMatchObject({ error: 'Redis is not connected (reconnecting)' });
  });

  it('without any Redis behaves as a Redis failure', async () => {
    const { call } = limiter();
    const { log, logged } = quiet();
    expect((await call(parse({ minute: 1, policy: 'redis' }), { runtime: { log } })).response).toBeNull();
    expect((await call(parse({ minute: 1, policy: 'redis', fault_tolerant: false }), { runtime: { log } })).response?.status).toBe(500);
    expect(String(logged[0]?.error)).toContain('no Redis');
  });

  it('reads the counts the script answers, and retries a script Redis does not know yet with EVAL', async () => {
    const { call } = limiter();
    const seen: string[] = [];
    const redis: RedisScriptRunner = {
      status: 'ready',
      evalsha: async () => {
        seen.push('evalsha');
        throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      },
      eval: async (_script, numkeys, ...args) => {
        seen.push(`eval ${numkeys} ${String(args[0]).replace(/[0-9a-f-]{36}/, 'ID')}`);
        return [1, 7, 7];
      },
    };
    const config = parse({ minute: 5, hour: 7, policy: 'redis', limit_by: 'ip' });
    const { response } = await call(config, { runtime: { redis: redis as never, redisPrefix: 'p:' }, ip: '9.9.9.9' });
    expect(seen).toEqual(['evalsha', `eval 2 p:ratelimit:{plugin-1:9.9.9.9}:minute:${windowOf('minute', T0).start}`]);
    expect(response?.status).toBe(429);
    expect(response?.headers).toMatchObject({ 'x-ratelimit-remaining-minute': '0', 'x-ratelimit-remaining-hour': '0', 'ratelimit-limit': '7' });
  });
});
