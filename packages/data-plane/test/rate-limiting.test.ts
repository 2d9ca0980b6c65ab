import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { Consumer, Plugin, Route, Service, Snapshot } from '@gatehouse/core';
import { bundledPlugins, openPlugins, type PluginRuntime } from '@gatehouse/plugins';
import { deleteRedisPrefix, makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, requireRedis, SHARED_REDIS_URL, startEchoUpstream, startRedisServer, uniqueRedisPrefix, type EchoUpstream, type RedisServerHandle } from '@gatehouse/testkit';
import { compile, ConfigHolder, createDataPlaneServer, type DataPlaneServer, type ForwarderKind } from '../src';
import { quietLog, send, type Reply, type SendOptions } from './harness';

interface Gateway {
  dp: DataPlaneServer;
  send(path: string, options?: SendOptions): Promise<Reply>;
  load(snapshot: Snapshot): void;
  close(): Promise<void>;
}

async function startGateway(options: { runtime?: PluginRuntime; trustedIps?: string[]; forwarder?: ForwarderKind } = {}): Promise<Gateway> {
  const holder = new ConfigHolder();
  const runtime: PluginRuntime = { log: quietLog, ...options.runtime };
  const plugins = await openPlugins(runtime, bundledPlugins);
  const dp = await createDataPlaneServer({
    holder,
    listen: { host: '127.0.0.1', port: 0 },
    log: quietLog,
    runtime,
    trustedIps: options.trustedIps,
    forwarder: options.forwarder,
  });
  return { dp, send: (path, o) => send(dp.port, path, o), load: (s) => void holder.swap(compile(s)), close: async () => {
      await dp.close();
      await plugins.close();
    },
  };
}

/** A client of its own on a Redis, connected before it is handed to a data plane. */
async function redisClient(url: string): Promise<Redis> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  await client.ping();
  return client;
}

async function statuses(gateway: Gateway, path: string, count: number, options?: SendOptions): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await gateway.send(path, options)).status);
  return out;
}

/** Waits for a condition that becomes true on its own (a client noticing its server is gone). */
async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * rate-limiting (priority 910) through the real proxy. Limits are per year unless a test is about another period, so
 * no test straddles the end of its window.
 */
describe('rate-limiting through the proxy', () => {
  let echo: EchoUpstream;
  let service: Service;
  let route: Route;
  const snapshot = (plugins: Plugin[], extra: { consumers?: Consumer[]; credentials?: Record<string, Array<Record<string, unknown>>> } = {}) =>
    makeSnapshot({ services: [service], routes: [route], plugins, consumers: extra.consumers ?? [], credentials: (extra.credentials ?? {}) as never });
  const rateLimit = (config: Record<string, unknown>, fields: Record<string, unknown> = {}) =>
    makePlugin({ name: 'rate-limiting', service: { id: service.id }, config, ...fields });

  beforeAll(async () => {
    echo = await startEchoUpstream();
    service = makeService({ name: 'api', url: echo.url });
    route = makeRoute({ paths: ['/api'], service: { id: service.id } });
  });

  afterAll(async () => {
    await echo.close();
  });

  describe('local policy', () => {
    for (const forwarder of ['undici', 'http-proxy'] as const) {
      it(`lets the limit through with its headers and refuses the next request (${forwarder})`, async () => {
        const gw = await startGateway({ forwarder });
        try {
          gw.load(snapshot([rateLimit({ year: 3 })]));
          const passed = [];
          for (let i = 0; i < 3; i++) passed.push(await gw.send('/api'));
          expect(passed.map((r) => r.status)).toEqual([200, 200, 200]);
          expect(passed.map((r) => r.headers['x-ratelimit-remaining-year'])).toEqual(['2', '1', '0']);
          expect(passed[0]!.headers).toMatchObject({ 'x-ratelimit-limit-year': '3', 'ratelimit-limit': '3', 'ratelimit-remaining': '2' });
          expect(Number(passed[0]!.headers['ratelimit-reset'])).toBeGreaterThan(0);
          expect(passed[0]!.headers['x-echo-upstream']).toBe('true');
          expect(passed[0]!.json.headers['x-ratelimit-limit-year']).toBeUndefined();

          const before = echo.received.length;
          const refused = await gw.send('/api');
          expect(refused.status).toBe(429);
          expect(refused.json).toEqual({ message: 'API rate limit exceeded' });
          expect(refused.headers).toMatchObject({ 'x-ratelimit-limit-year': '3', 'x-ratelimit-remaining-year': '0', 'ratelimit-remaining': '0' });
          expect(refused.headers['retry-after']).toBe(refused.headers['ratelimit-reset']);
          expect(echo.received.length).toBe(before);
        } finally {
          await gw.close();
        }
      });
    }

    it("replaces an upstream's own rate-limit headers, and keeps its other headers", async () => {
      const upstream: Server = createServer((_req, res) => {
        res.writeHead(200, { 'x-ratelimit-limit-year': '999', 'ratelimit-remaining': '999', 'x-upstream': 'kept', 'content-length': '2' });
        res.end('ok');
      });
      await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
      const own = makeService({ name: 'own', url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
      const ownRoute = makeRoute({ paths: ['/own'], service: { id: own.id } });
      for (const forwarder of ['undici', 'http-proxy'] as const) {
        const gw = await startGateway({ forwarder });
        try {
          gw.load(makeSnapshot({ services: [own], routes: [ownRoute], plugins: [makePlugin({ name: 'rate-limiting', config: { year: 10 } })] }));
          const reply = await gw.send('/own');
          expect(reply.status).toBe(200);
          expect(reply.headers).toMatchObject({ 'x-ratelimit-limit-year': '10', 'ratelimit-remaining': '9', 'x-upstream': 'kept' });
        } finally {
          await gw.close();
        }
      }
      await new Promise<void>((r) => upstream.close(() => r()));
    });

    it('keeps one budget per plugin configuration: a global one spans services, service ones are separate', async () => {
      const other = makeService({ name: 'other', url: echo.url });
      const otherRoute = makeRoute({ paths: ['/other'], service: { id: other.id } });
      const gw = await startGateway();
      try {
        const both = (plugins: Plugin[]) => makeSnapshot({ services: [service, other], routes: [route, otherRoute], plugins });
        gw.load(both([rateLimit({ year: 1 }), makePlugin({ name: 'rate-limiting', service: { id: other.id }, config: { year: 1 } })]));
        expect([(await gw.send('/api')).status, (await gw.send('/other')).status]).toEqual([200, 200]);
        expect([(await gw.send('/api')).status, (await gw.send('/other')).status]).toEqual([429, 429]);

        gw.load(both([makePlugin({ name: 'rate-limiting', config: { year: 1 } })]));
        expect([(await gw.send('/api')).status, (await gw.send('/other')).status]).toEqual([200, 429]);
      } finally {
        await gw.close();
      }
    });

    it('hides the headers with hide_client_headers and answers error_code / error_message', async () => {
      const gw = await startGateway();
      try {
        gw.load(snapshot([rateLimit({ year: 1, hide_client_headers: true, error_code: 503, error_message: 'Try later' })]));
        const ok = await gw.send('/api');
        expect(ok.status).toBe(200);
        expect(Object.keys(ok.headers).filter((h) => h.includes('ratelimit'))).toEqual([]);
        const refused = await gw.send('/api');
        expect(refused.status).toBe(503);
        expect(refused.json).toEqual({ message: 'Try later' });
        expect(refused.headers['retry-after']).toBeUndefined();
      } finally {
        await gw.close();
      }
    });
  });

  describe('client IP', () => {
    it('a spoofed X-Forwarded-For from an untrusted peer does not pick another budget', async () => {
      const gw = await startGateway();
      try {
        gw.load(snapshot([rateLimit({ year: 2, limit_by: 'ip' })]));
        const replies = [];
        for (const spoof of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) replies.push(await gw.send('/api', { headers: { 'x-forwarded-for': spoof } }));
        expect(replies.map((r) => r.status)).toEqual([200, 200, 429]);
        expect(replies[0]!.json.headers['x-real-ip']).toBe('127.0.0.1');
        expect(replies[0]!.json.headers['x-forwarded-for']).toBe('1.1.1.1, 127.0.0.1');
      } finally {
        await gw.close();
      }
    });

    it('behind a trusted proxy the forwarded client address picks the budget', async () => {
      const gw = await startGateway({ trustedIps: ['127.0.0.0/8'] });
      try {
        gw.load(snapshot([rateLimit({ year: 1, limit_by: 'ip' })]));
        const first = await gw.send('/api', { headers: { 'x-forwarded-for': '6.6.6.6, 1.1.1.1' } });
        expect(first.status).toBe(200);
        expect(first.json.headers['x-real-ip']).toBe('1.1.1.1');
        expect(first.json.headers['x-forwarded-for']).toBe('6.6.6.6, 1.1.1.1, 127.0.0.1');
        // the left-most entry is the client's to choose: it changes nothing
        expect((await gw.send('/api', { headers: { 'x-forwarded-for': '7.7.7.7, 1.1.1.1' } })).status).toBe(429);
        expect((await gw.send('/api', { headers: { 'x-forwarded-for': '2.2.2.2' } })).status).toBe(200);
        expect((await gw.send('/api')).status).toBe(200);
        expect((await gw.send('/api')).status).toBe(429);
      } finally {
        await gw.close();
      }
    });
  });

  it('anonymous access: a low limit for the anonymous consumer, a higher one for authenticated consumers', async () => {
    const anonymous = makeConsumer({ username: 'anonymous' });
    const alice = makeConsumer({ username: 'alice' });
    const bob = makeConsumer({ username: 'bob' });
    const gw = await startGateway();
    try {
      gw.load(
        snapshot(
          [
            makePlugin({ name: 'key-auth', service: { id: service.id }, config: { anonymous: anonymous.id } }),
            rateLimit({ year: 5 }),
            makePlugin({ name: 'rate-limiting', consumer: { id: anonymous.id }, config: { year: 2 } }),
          ],
          {
            consumers: [anonymous, alice, bob],
            credentials: { keyauth_credentials: [makeCredential(alice, { key: 'alice-key' }), makeCredential(bob, { key: 'bob-key' })] },
          },
        ),
      );
      const anonymousReplies = [];
      for (let i = 0; i < 3; i++) anonymousReplies.push(await gw.send('/api', { headers: { apikey: i === 1 ? 'wrong-key' : '' } }));
      expect(anonymousReplies.map((r) => r.status)).toEqual([200, 200, 429]);
      expect(anonymousReplies[0]!.json.headers).toMatchObject({ 'x-anonymous-consumer': 'true', 'x-consumer-id': anonymous.id });
      expect(anonymousReplies[0]!.headers['x-ratelimit-limit-year']).toBe('2');

      const aliceReplies = [];
      for (let i = 0; i < 6; i++) aliceReplies.push(await gw.send('/api', { headers: { apikey: 'alice-key' } }));
      expect(aliceReplies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
      expect(aliceReplies[0]!.headers['x-ratelimit-limit-year']).toBe('5');
      expect(aliceReplies[0]!.json.headers['x-consumer-id']).toBe(alice.id);
      // every consumer has a budget of its own; the anonymous one is shared by all anonymous requests
      expect(await statuses(gw, '/api', 1, { headers: { apikey: 'bob-key' } })).toEqual([200]);
      expect(await statuses(gw, '/api', 1)).toEqual([429]);
    } finally {
      await gw.close();
    }
  });

  describe('redis policy', () => {
    const prefixes: string[] = [];
    const clients: Redis[] = [];
    const gateways: Gateway[] = [];

    beforeAll(async () => {
      await requireRedis();
    });

    afterAll(async () => {
      await Promise.all(gateways.map((g) => g.close()));
      for (const client of clients) client.disconnect();
      for (const prefix of prefixes) await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
    });

    /** Two data planes on the shared Redis, each with its own client, both with one new key prefix. */
    async function twoDataPlanes(): Promise<[Gateway, Gateway, string]> {
      const prefix = uniqueRedisPrefix('rate-limiting');
      prefixes.push(prefix);
      const pair: Gateway[] = [];
      for (let i = 0; i < 2; i++) {
        const client = await redisClient(SHARED_REDIS_URL);
        clients.push(client);
        const gw = await startGateway({ runtime: { redis: client, redisPrefix: prefix } });
        gateways.push(gw);
        pair.push(gw);
      }
      return [pair[0]!, pair[1]!, prefix];
    }

    it('two data planes share one budget exactly, one request after the other', async () => {
      const [a, b, prefix] = await twoDataPlanes();
      const config = snapshot([rateLimit({ hour: 5, year: 5, policy: 'redis' })]);
      a.load(config);
      b.load(config);
      const replies: Reply[] = [];
      for (let i = 0; i < 7; i++) replies.push(await (i % 2 === 0 ? a : b).send('/api'));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
      expect(replies.slice(0, 5).map((r) => r.headers['x-ratelimit-remaining-year'])).toEqual(['4', '3', '2', '1', '0']);
      expect(replies[5]!.headers).toMatchObject({ 'x-ratelimit-remaining-hour': '0', 'ratelimit-limit': '5', 'ratelimit-remaining': '0' });
      expect(Number(replies[5]!.headers['retry-after'])).toBeGreaterThan(0);

      const keys = await clients[0]!.keys(`${prefix}ratelimit:*`);
      expect(keys.map((k) => k.replace(/:\d+$/, '').replace(/[0-9a-f-]{36}/, 'PLUGIN'))).toEqual(
        expect.arrayContaining([`${prefix}ratelimit:{PLUGIN:127.0.0.1}:hour`, `${prefix}ratelimit:{PLUGIN:127.0.0.1}:year`]),
      );
      const ttl = await clients[0]!.pttl(keys.find((k) => k.includes(':hour:'))!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(3_601_000);
    });

    it('two data planes share one budget exactly under concurrent load', async () => {
      const [a, b] = await twoDataPlanes();
      const config = snapshot([rateLimit({ year: 25, policy: 'redis' })]);
      a.load(config);
      b.load(config);
      const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).send('/api')));
      expect(replies.filter((r) => r.status === 200)).toHaveLength(25);
      expect(replies.filter((r) => r.status === 429)).toHaveLength(35);
      const remaining = replies.filter((r) => r.status === 200).map((r) => Number(r.headers['x-ratelimit-remaining-year']));
      expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    });

    it('a config naming its own Redis shares the budget the same way', async () => {
      const [a, b] = await twoDataPlanes();
      const { hostname, port } = new URL(SHARED_REDIS_URL);
      const config = snapshot([rateLimit({ year: 3, policy: 'redis', redis: { host: hostname, port: Number(port || 6379) } })]);
      a.load(config);
      b.load(config);
      // the plugin's own connection opens on the first request, which waits for it
      const replies: number[] = [];
      for (let i = 0; i < 5; i++) replies.push((await (i % 2 === 0 ? a : b).send('/api')).status);
      expect(replies).toEqual([200, 200, 200, 429, 429]);
    });

    describe('when Redis goes down', () => {
      let own: RedisServerHandle;
      let client: Redis;
      let gw: Gateway;

      beforeAll(async () => {
        own = await startRedisServer();
        client = await redisClient(own.url);
        gw = await startGateway({ runtime: { redis: client, redisPrefix: uniqueRedisPrefix('rate-limiting-down') } });
      });

      afterAll(async () => {
        await gw.close();
        client.disconnect();
        await own.stop();
      });

      it('fault_tolerant lets requests through without headers; otherwise 500; counting resumes when Redis is back', async () => {
        const tolerant = rateLimit({ year: 2, policy: 'redis' });
        gw.load(snapshot([tolerant]));
        expect(await statuses(gw, '/api', 3)).toEqual([200, 200, 429]);

        await own.stop();
        expect(own.isRunning()).toBe(false);
        await eventually(() => client.status !== 'ready');
        const through = await gw.send('/api');
        expect(through.status).toBe(200);
        expect(Object.keys(through.headers).filter((h) => h.includes('ratelimit'))).toEqual([]);

        gw.load(snapshot([{ ...tolerant, config: { year: 2, policy: 'redis', fault_tolerant: false } }]));
        const failed = await gw.send('/api');
        expect(failed.status).toBe(500);
        expect(failed.json).toEqual({ message: 'An unexpected error occurred' });

        // a restarted Redis comes back empty: the budget starts over
        await own.restart();
        await eventually(() => client.status === 'ready', 10_000);
        expect(await statuses(gw, '/api', 3)).toEqual([200, 200, 429]);
      }, 30_000);
    });
  });
});
