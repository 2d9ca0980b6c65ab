import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EMPTY_CONFIG_HASH } from '@gatehouse/core';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { createStatusServer, type StatusServer } from '../src';
import { send, startDataPlane, type RunningDataPlane } from './harness';

describe('status listener', () => {
  let gw: RunningDataPlane;
  let status: StatusServer;

  beforeAll(async () => {
    gw = await startDataPlane(null);
    status = await createStatusServer({ holder: gw.holder, listen: '127.0.0.1:0', proxy: gw.dp, details: () => ({ node_id: 'dp-1' }) });
  });

  afterAll(async () => {
    await status.close();
    await gw.close();
  });

  it('is not ready until a configuration is loaded, then ready', async () => {
    const before = await send(status.port, '/status/ready');
    expect(before.status).toBe(503);
    expect(before.json).toEqual({ message: 'no configuration available (empty configuration present)' });
    const empty = await send(status.port, '/status');
    expect(empty.json).toMatchObject({ configuration_hash: EMPTY_CONFIG_HASH, config_version: null });

    const service = makeService({ url: 'http://127.0.0.1:9' });
    const snapshot = makeSnapshot({ services: [service], routes: [makeRoute({ paths: ['/x'], service: { id: service.id } })] }, 7);
    gw.load(snapshot);
    const after = await send(status.port, '/status/ready');
    expect(after.status).toBe(200);
    expect(after.json).toEqual({ message: 'ready' });
    const loaded = await send(status.port, '/status');
    expect(loaded.status).toBe(200);
    expect(loaded.json).toMatchObject({ configuration_hash: snapshot.hash, config_version: 7, node_id: 'dp-1' });
  });

  it("reports the proxy's connection and request counters", async () => {
    await gw.send('/nothing');
    await gw.send('/nothing');
    const { json } = await send(status.port, '/status');
    expect(json.server.total_requests).toBeGreaterThanOrEqual(2);
    expect(json.server.connections_accepted).toBeGreaterThanOrEqual(2);
    expect(json.server).toHaveProperty('connections_active');
  });

  it('is not ready while the proxy does not accept connections', async () => {
    const proxy = await startDataPlane(null);
    const own = await createStatusServer({ holder: proxy.holder, listen: '127.0.0.1:0', proxy: proxy.dp });
    try {
      proxy.load(makeSnapshot({}, 3));
      expect((await send(own.port, '/status/ready')).status).toBe(200);
      await proxy.close();
      const closed = await send(own.port, '/status/ready');
      expect([closed.status, closed.json]).toEqual([503, { message: 'the proxy is not accepting connections' }]);
    } finally {
      await own.close();
    }
  });

  it('answers 404 elsewhere', async () => {
    expect((await send(status.port, '/other')).status).toBe(404);
  });
});
