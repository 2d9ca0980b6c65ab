// The body and response phases plugins can ask for, through a real data plane and the echo upstream: bounded
// buffering (past the limit a request body is refused with 413, a response passes unchanged), transforms that keep
// Content-Length true, and captures that are skipped past the limit.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { compile, ConfigHolder, createDataPlaneServer, type DataPlaneServer } from '../src';
import { MemoryCacheStore, type CacheStore } from '@gatehouse/plugins';
import { quietLog, send } from './harness';

const LIMIT = 2048;

describe('plugin body phases, buffered-body limit', () => {
  let echo: EchoUpstream;
  let dp: DataPlaneServer;

  beforeAll(async () => {
    echo = await startEchoUpstream();
    const service = makeService({ name: 'echo', url: echo.url });
    const routes = ['req-body', 'resp-body', 'cache', 'plain'].map((name) => makeRoute({ name, paths: [`/${name}`], service: { id: service.id } }));
    const on = (route: number, name: string, config: Record<string, unknown>) => makePlugin({ name, route: { id: routes[route]!.id }, config });
    const snapshot = makeSnapshot({
      services: [service],
      routes,
      plugins: [
        on(0, 'request-transformer', { add: { body: ['added:yes'] } }),
        on(1, 'response-transformer', { add: { json: ['added:yes'] } }),
        on(2, 'proxy-cache', { strategy: 'memory' }),
      ],
    });
    dp = await createDataPlaneServer({ holder: new ConfigHolder(compile(snapshot)), listen: { host: '127.0.0.1', port: 0 }, log: quietLog, runtime: { maxBufferedBody: LIMIT } });
  });

  afterAll(async () => {
    await dp?.close();
    await echo?.close();
  });

  const json = { 'content-type': 'application/json' };

  it('a request body a plugin must read, past the limit: 413 "Request size limit exceeded", the upstream never reached', async () => {
    const before = echo.received.length;
    const big = await send(dp.port, '/req-body', { method: 'POST', headers: json, body: JSON.stringify({ pad: 'x'.repeat(LIMIT) }) });
    expect([big.status, big.json]).toEqual([413, { message: 'Request size limit exceeded' }]);
    expect(echo.received.length).toBe(before);
    const small = await send(dp.port, '/req-body', { method: 'POST', headers: json, body: '{"a":1}' });
    expect(small.status).toBe(200);
    expect(JSON.parse(small.json.body)).toEqual({ a: 1, added: 'yes' });
  });

  it('a response body within the limit is transformed with a true Content-Length; past it, it passes unchanged', async () => {
    const small = await send(dp.port, '/resp-body/s');
    expect(small.json.added).toBe('yes');
    expect(small.headers['content-length']).toBe(String(Buffer.byteLength(small.text)));
    const big = await send(dp.port, `/resp-body/b?pad=${'y'.repeat(LIMIT)}`);
    expect(big.status).toBe(200);
    expect(big.json.added).toBeUndefined();
    expect(big.json.query.pad).toHaveLength(LIMIT);
    expect(big.headers['content-length']).toBe(String(Buffer.byteLength(big.text)));
  });

  it('a capture past the limit stores nothing: the response streams and the next request is a Miss again', async () => {
    const path = `/cache/b?pad=${'z'.repeat(LIMIT)}`;
    const first = await send(dp.port, path);
    expect([first.status, first.headers['x-cache-status']]).toEqual([200, 'Miss']);
    expect(first.json.query.pad).toHaveLength(LIMIT);
    expect((await send(dp.port, path)).headers['x-cache-status']).toBe('Miss');
    await send(dp.port, '/cache/small');
    expect((await send(dp.port, '/cache/small')).headers['x-cache-status']).toBe('Hit');
  });

  it('routes without body plugins stream bodies of any size', async () => {
    const body = 'q'.repeat(LIMIT * 4);
    const res = await send(dp.port, '/plain', { method: 'POST', body });
    expect(res.status).toBe(200);
    expect(res.json.body).toBe(body);
  });
});

describe('a capture stored in another process', () => {
  it('holds the last bytes of the response until the copy is stored, so the client that has them finds the entry', async () => {
    const echo = await startEchoUpstream();
    const service = makeService({ name: 'echo', url: echo.url });
    const route = makeRoute({ name: 'cached', paths: ['/cached'], service: { id: service.id } });
    const snapshot = makeSnapshot({ services: [service], routes: [route], plugins: [makePlugin({ name: 'proxy-cache', route: { id: route.id }, config: { strategy: 'memory' } })] });
    // a store whose writes complete when the test says so (as a proxy worker's primary answers later)
    const memory = new MemoryCacheStore(1 << 20);
    const writes: Array<() => void> = [];
    const store: CacheStore = {
      get: async (key) => memory.get(key),
      set: (key, entry, ttl) => new Promise<void>((resolve) => writes.push(() => resolve(memory.set(key, entry, ttl)))),
      delete: async (key) => memory.delete(key),
      clear: async () => memory.clear(),
    };
    const dp = await createDataPlaneServer({ holder: new ConfigHolder(compile(snapshot)), listen: { host: '127.0.0.1', port: 0 }, log: quietLog, runtime: { proxyCacheMemory: store } });
    try {
      let answered = false;
      const first = send(dp.port, '/cached/x').then((reply) => {
        answered = true;
        return reply;
      });
      await waitFor(() => writes.length === 1);
      expect(answered).toBe(false);
      writes[0]!();
      expect((await first).headers['x-cache-status']).toBe('Miss');
      expect((await send(dp.port, '/cached/x')).headers['x-cache-status']).toBe('Hit');
    } finally {
      await dp.close();
      await echo.close();
    }
  });
});

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
