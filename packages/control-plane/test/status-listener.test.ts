// The control plane's status listener (decision 20): readiness follows the database and the last publication, and
// /metrics carries Kong's datastore and data plane series with ours; no token is ever asked for.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SignedSnapshot } from '@gatehouse/core';
import { compile } from '@gatehouse/data-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { MemoryBus, type ConfigBus, type PublishOptions } from '@gatehouse/sync';
import { createTestDatabase, prometheusSamples, sampleValue, type TestDatabase } from '@gatehouse/testkit';
import { Registry } from 'prom-client';
import { ControlPlaneMetrics, createAdminApp, openDatabase, SnapshotPublisher, startControlPlaneStatusServer, type ControlPlaneStatusServer, type Database } from '../src';

const SECRET = 'status-listener-test-secret-0123456789abcdef';
const SEEN = Math.floor(Date.now() / 1000);
const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** a bus whose publish can be made to fail, as when Redis is unreachable */
class FlakyBus extends MemoryBus {
  down = false;
  override publish(snapshot: SignedSnapshot, options?: PublishOptions): Promise<boolean> {
    return this.down ? Promise.reject(new Error('bus unreachable')) : super.publish(snapshot, options);
  }
}

describe('control plane status listener (Postgres)', () => {
  let testDb: TestDatabase;
  let database: Database;
  let publisher: SnapshotPublisher;
  let listener: ControlPlaneStatusServer;
  let bus: FlakyBus;
  let base: string;

  beforeAll(async () => {
    testDb = await createTestDatabase({ prefix: 'gh_status' });
    database = await openDatabase({ url: testDb.url });
    bus = new FlakyBus();
    const app = createAdminApp({ database, onCommitted: () => publisher.trigger() });
    const registry = new Registry();
    const metrics = new ControlPlaneMetrics({ registry, pingDatabase: () => database.ping(), bus: bus as ConfigBus, publisher: () => publisher.status() });
    publisher = new SnapshotPublisher({
      store: app.locals.admin.store,
      bus,
      secret: SECRET,
      plugins: bundledPlugins,
      check: (s) => void compile(s),
      log: silent,
      reconcileIntervalMs: 60_000,
      onPublished: (_s, ms) => metrics.published(ms),
      onFailed: () => metrics.publicationFailed(),
    });
    await publisher.start();
    listener = await startControlPlaneStatusServer({
      listen: '127.0.0.1:0',
      pingDatabase: () => database.ping(),
      configVersion: () => app.locals.admin.store.version(),
      publisher: () => publisher.status(),
      metrics: registry,
    });
    base = `http://127.0.0.1:${listener.port}`;
    await bus.reportDataPlane({ id: 'dp-1', hostname: 'host-1', ip: '10.0.0.1', version: '0.1.0', config_version: 1, config_hash: '0000000000000000000000000000000f', last_seen: SEEN, sync_status: 'normal' });
  }, 60_000);

  afterAll(async () => {
    await listener?.close();
    await publisher?.stop();
    await database?.close().catch(() => {});
    await testDb?.drop();
  });

  const metrics = async () => prometheusSamples(await (await fetch(`${base}/metrics`)).text());

  it('is ready once the database answers and a publication succeeded', async () => {
    const ready = await fetch(`${base}/status/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ message: 'ready' });
    const status = (await (await fetch(`${base}/status`)).json()) as any;
    expect(status.database).toEqual({ reachable: true });
    expect(status.config_version).toBe(publisher.status().version);
    expect(status.publisher.last_error).toBeNull();
  });

  it('serves Kong\'s datastore and data plane series and ours on /metrics', async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const samples = prometheusSamples(await res.text());
    expect(sampleValue(samples, 'kong_datastore_reachable')).toBe(1);
    expect(sampleValue(samples, 'kong_data_plane_last_seen', { node_id: 'dp-1', hostname: 'host-1', ip: '10.0.0.1' })).toBe(SEEN);
    expect(sampleValue(samples, 'kong_data_plane_config_hash', { node_id: 'dp-1', hostname: 'host-1', ip: '10.0.0.1' })).toBe(15);
    expect(sampleValue(samples, 'gatehouse_control_plane_config_version')).toBe(publisher.status().version);
    expect(sampleValue(samples, 'gatehouse_publication_failures_total')).toBe(0);
    expect(sampleValue(samples, 'gatehouse_control_plane_publication_ok')).toBe(1);
  });

  it('answers 503 while publications fail, and 200 again after one succeeds', async () => {
    bus.down = true;
    await publisher.trigger();
    const down = await fetch(`${base}/status/ready`);
    expect(down.status).toBe(503);
    expect(((await down.json()) as any).message).toMatch(/^last publication failed: /);
    const during = await metrics();
    expect(sampleValue(during, 'gatehouse_publication_failures_total')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(during, 'gatehouse_control_plane_publication_ok')).toBe(0);
    bus.down = false;
    await publisher.trigger();
    expect((await fetch(`${base}/status/ready`)).status).toBe(200);
  });

  it('refuses writes with 405 and unknown paths with 404', async () => {
    expect((await fetch(`${base}/status`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
  });

  it('answers 503 with the database unreachable, and says so on /status and /metrics', async () => {
    await testDb.drop();
    const ready = await fetch(`${base}/status/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ message: 'database unreachable' });
    const status = (await (await fetch(`${base}/status`)).json()) as any;
    expect(status.database).toEqual({ reachable: false });
    expect(status.config_version).toBeNull();
    expect(sampleValue(await metrics(), 'kong_datastore_reachable')).toBe(0);
  });
});
