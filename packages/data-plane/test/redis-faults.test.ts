import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer, type RedisServerHandle } from '@gatehouse/testkit';
import { Redis } from 'ioredis';
import { RedisBus, redisBusKeys, signSnapshot } from '@gatehouse/sync';
import { DataPlaneSync, type DataPlaneSyncOptions } from '../src';
import { makeSnapshot, MemoryLogger, ServingStore, sleep, waitFor } from './support/snapshots';

// Every test here stops and restarts a redis-server of its own (never the shared one).
const SECRET = 'fault-test-secret-0123456789abcdef-01';
const PREFIX = 'gatehouse-faults:';

describe('DataPlaneSync over RedisBus when Redis fails', () => {
  let redis: RedisServerHandle;
  let dir: string;
  const closers: Array<() => Promise<unknown>> = [];

  beforeEach(async () => {
    redis = await startRedisServer();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-faults-'));
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function bus(): RedisBus {
    const b = new RedisBus({ url: redis.url, prefix: PREFIX, connectTimeoutMs: 1000 });
    closers.push(() => b.close());
    return b;
  }

  function dataPlane(overrides: Partial<DataPlaneSyncOptions> = {}) {
    const store = new ServingStore();
    const logger = new MemoryLogger();
    const sync = new DataPlaneSync({
      bus: bus(),
      secret: SECRET,
      cacheFile: join(dir, 'snapshot.json'),
      apply: store.apply,
      currentVersion: store.currentVersion,
      identity: { id: 'dp-fault' },
      logger,
      heartbeatIntervalMs: 200,
      refetchIntervalMs: 0,
      ...overrides,
    });
    closers.push(() => sync.stop());
    return { store, logger, sync };
  }

  /** the control plane's habit: publish, and on failure try again until it goes through */
  async function publishUntilAccepted(publisher: RedisBus, version: number, timeoutMs = 15000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await publisher.publish(signSnapshot(makeSnapshot(version), SECRET));
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(100);
      }
    }
  }

  it(
    'keeps the last snapshot while Redis is down and converges to the latest once the publisher gets through again',
    async () => {
      const publisher = bus();
      const { store, sync } = dataPlane();
      await publisher.publish(signSnapshot(makeSnapshot(1), SECRET));
      await sync.start();
      expect(store.currentVersion()).toBe(1);

      await redis.stop();
      // the control plane hears about the outage (a rejection, not a queued command; how fast: tests/bench/sync-faults.ts)
      await expect(publisher.publish(signSnapshot(makeSnapshot(2), SECRET))).rejects.toThrow(/Redis unreachable/);
      await expect(publisher.fetchLatest()).rejects.toThrow();
      await sync.syncNow(); // a fetch attempt while down (awaited) changes nothing
      expect(store.currentVersion()).toBe(1);
      expect(sync.status().last_error).toMatch(/fetch failed/);

      await redis.restart(); // comes back empty
      await publishUntilAccepted(publisher, 2);
      await waitFor('the data plane to converge on version 2', () => store.currentVersion() === 2, 15000);
      expect(store.appliedVersions).toEqual([1, 2]);
      expect(sync.status().last_error).toBeNull();
    },
    40000,
  );

  it(
    'refetches after its subscription reconnects, even when it missed the announcement',
    async () => {
      const { store, sync, logger } = dataPlane();
      const publisher = bus();
      await publisher.publish(signSnapshot(makeSnapshot(1), SECRET));
      await sync.start();
      expect(store.currentVersion()).toBe(1);

      // a newer snapshot stored without any announcement, then the subscriber's connection is cut
      const raw = new Redis(redis.url);
      const keys = redisBusKeys(PREFIX);
      const v2 = signSnapshot(makeSnapshot(2), SECRET);
      await raw.set(keys.snapshot, JSON.stringify(v2));
      await raw.set(keys.head, JSON.stringify({ version: 2, hash: v2.hash }));
      expect(store.currentVersion()).toBe(1);
      expect(Number(await raw.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))).toBeGreaterThan(0);
      raw.disconnect();

      await waitFor('version 2 fetched after the reconnect', () => store.currentVersion() === 2, 15000);
      // nothing but the reconnect made it fetch (no announcement, no periodic check): the reconnect comes first
      const reconnected = logger.lines.findIndex((l) => l.level === 'info' && /reconnected/.test(l.message));
      const loaded = logger.lines.findIndex((l) => l.message === 'config loaded' && l.fields?.version === 2);
      expect(reconnected).toBeGreaterThanOrEqual(0);
      expect(loaded).toBeGreaterThan(reconnected);
      expect(store.appliedVersions).toEqual([1, 2]);
    },
    40000,
  );

  it(
    'starts from the disk cache with Redis down, then follows Redis once it is up',
    async () => {
      const first = dataPlane();
      const publisher = bus();
      await publisher.publish(signSnapshot(makeSnapshot(3), SECRET));
      await first.sync.start();
      expect(first.store.currentVersion()).toBe(3);
      await first.sync.stop();

      await redis.stop();
      const second = dataPlane();
      // start resolves with Redis down (how fast: tests/bench/sync-faults.ts), serving the cache
      await second.sync.start();
      expect(second.store.currentVersion()).toBe(3);
      expect(second.sync.status().source).toBe('cache');

      await redis.restart();
      await publishUntilAccepted(publisher, 4);
      await waitFor('version 4 once Redis is up', () => second.store.currentVersion() === 4, 15000);
      expect(second.store.appliedVersions).toEqual([3, 4]);
    },
    40000,
  );

  it(
    'starts empty with Redis down and no cache, and loads the config once Redis is up',
    async () => {
      await redis.stop();
      const { store, sync } = dataPlane({ cacheFile: null });
      await sync.start();
      expect(store.current).toBeNull();

      await redis.restart();
      const publisher = bus();
      await publishUntilAccepted(publisher, 1);
      await waitFor('version 1', () => store.currentVersion() === 1, 15000);
    },
    40000,
  );

  it(
    'keeps its heartbeat going across an outage',
    async () => {
      const publisher = bus();
      const { sync, logger } = dataPlane();
      await publisher.publish(signSnapshot(makeSnapshot(1), SECRET));
      await sync.start();
      await waitFor('the first heartbeat', async () => (await publisher.listDataPlanes()).some((d) => d.id === 'dp-fault'));

      await redis.stop();
      await expect(publisher.listDataPlanes()).rejects.toThrow();
      await waitFor('a heartbeat to fail during the outage', () => logger.has('warn', /heartbeat failed/), 15000);
      await redis.restart();
      // the restarted Redis is empty; the data plane shows up again on its own
      await waitFor(
        'the heartbeat after the outage',
        async () => {
          try {
            const rows = await publisher.listDataPlanes();
            return rows.some((d) => d.id === 'dp-fault' && d.config_version === 1);
          } catch {
            return false;
          }
        },
        15000,
      );
    },
    40000,
  );
});
