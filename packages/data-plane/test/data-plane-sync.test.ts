import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteRedisPrefix, requireRedis, SHARED_REDIS_URL, uniqueRedisPrefix } from '@gatehouse/testkit';
import { MemoryBus, RedisBus, signSnapshot, type ConfigBus } from '@gatehouse/sync';
import { DataPlaneSync, type DataPlaneSyncOptions } from '../src';
import { InstrumentedBus } from './support/instrumented-bus';
import { makeSnapshot, makeUnloadableSnapshot, MemoryLogger, ServingStore, signUnsealed, waitFor } from './support/snapshots';

const SECRET = 'dp-sync-test-secret-0123456789abcdef';

interface Topology {
  /** the control plane's handle on the bus */
  publisher: ConfigBus;
  /** a fresh handle for a data plane (Redis: its own connections; memory: the same bus) */
  dataPlaneBus(): ConfigBus;
  cleanup(): Promise<void>;
}

const topologies: Array<[string, () => Topology]> = [
  [
    'MemoryBus',
    () => {
      const bus = new MemoryBus();
      return { publisher: bus, dataPlaneBus: () => bus, cleanup: () => bus.close() };
    },
  ],
  [
    'RedisBus',
    () => {
      const prefix = uniqueRedisPrefix('dp-sync');
      const buses: ConfigBus[] = [];
      const make = () => {
        const bus = new RedisBus({ url: SHARED_REDIS_URL, prefix });
        buses.push(bus);
        return bus;
      };
      return {
        publisher: make(),
        dataPlaneBus: make,
        cleanup: async () => {
          await Promise.all(buses.map((b) => b.close()));
          await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
        },
      };
    },
  ],
];

beforeAll(async () => {
  await requireRedis(SHARED_REDIS_URL);
});

describe.each(topologies)('DataPlaneSync over %s', (_name, makeTopology) => {
  let topology: Topology;
  let dir: string;
  const running: DataPlaneSync[] = [];

  function dataPlane(overrides: Partial<DataPlaneSyncOptions> = {}) {
    const store = new ServingStore();
    const logger = new MemoryLogger();
    const bus = new InstrumentedBus(topology.dataPlaneBus());
    const sync = new DataPlaneSync({
      bus,
      secret: SECRET,
      cacheFile: join(dir, 'cache', 'snapshot.json'),
      apply: store.apply,
      currentVersion: store.currentVersion,
      identity: { id: 'dp-test', hostname: 'dp-host', ip: '10.1.1.1', version: '0.1.0' },
      logger,
      heartbeatIntervalMs: 0,
      refetchIntervalMs: 0,
      ...overrides,
    });
    running.push(sync);
    return { store, logger, bus, sync };
  }

  const publish = async (version: number, label?: string, secret = SECRET) => {
    const signed = signSnapshot(makeSnapshot(version, label), secret);
    await topology.publisher.publish(signed);
    return signed;
  };

  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.stop()));
    await topology.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });
  const setup = () => {
    topology = makeTopology();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-dp-sync-'));
  };

  it('starts empty when nothing was published, then loads the first published snapshot', async () => {
    setup();
    const { store, sync } = dataPlane();
    await sync.start();
    expect(store.current).toBeNull();
    expect(sync.status()).toMatchObject({ config_version: null, config_hash: null, source: null });
    expect(sync.report()).toMatchObject({ id: 'dp-test', config_version: 0, config_hash: '0'.repeat(32), sync_status: 'unknown' });

    await publish(1);
    await waitFor('version 1 applied', () => store.currentVersion() === 1);
    expect(sync.status()).toMatchObject({ config_version: 1, config_hash: makeSnapshot(1).hash, source: 'bus', last_error: null });
    expect(sync.report()).toMatchObject({ config_version: 1, sync_status: 'normal' });
  });

  it('fetches the latest snapshot at start', async () => {
    setup();
    await publish(1);
    await publish(2);
    const { store, sync } = dataPlane();
    await sync.start();
    expect(store.currentVersion()).toBe(2);
    expect(store.appliedVersions).toEqual([2]);
  });

  it('writes the disk cache after each apply, atomically and readable by its owner only', async () => {
    setup();
    const { store, sync } = dataPlane();
    await sync.start();
    const published = await publish(1);
    await waitFor('version 1', () => store.currentVersion() === 1);
    const cacheFile = join(dir, 'cache', 'snapshot.json');
    await waitFor('cache written', () => {
      try {
        return JSON.parse(readFileSync(cacheFile, 'utf8')).version === 1;
      } catch {
        return false;
      }
    });
    expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
    const cached = JSON.parse(readFileSync(cacheFile, 'utf8'));
    expect(cached).toEqual(published);
  });

  it('serves the disk cache at start, then moves on to newer versions from the bus', async () => {
    setup();
    const first = dataPlane();
    await first.sync.start();
    await publish(4);
    await waitFor('version 4', () => first.store.currentVersion() === 4);
    await first.sync.stop();

    // a data plane restarting against a bus that lost everything: the cache is all it has
    await topology.cleanup();
    topology = makeTopology();
    const second = dataPlane();
    await second.sync.start();
    expect(second.store.currentVersion()).toBe(4);
    expect(second.sync.status().source).toBe('cache');

    // 3 is older than the cache: ignored; 5, published after it, is the marker that 3's turn has passed
    await publish(3);
    await publish(5);
    await waitFor('version 5', () => second.store.currentVersion() === 5);
    expect(second.store.appliedVersions).toEqual([4, 5]);
  });

  it('rejects a forged snapshot and keeps serving the last good one', async () => {
    setup();
    const { store, sync, logger } = dataPlane();
    await sync.start();
    await publish(1);
    await waitFor('version 1', () => store.currentVersion() === 1);

    await publish(2, 'forged', 'not-the-cluster-secret-0123456789abcdef');
    await waitFor('the rejection to be logged', () => logger.has('error', /rejected/));
    expect(store.currentVersion()).toBe(1);
    expect(sync.status().last_error).toMatch(/signature does not match/);
    expect(JSON.parse(readFileSync(join(dir, 'cache', 'snapshot.json'), 'utf8')).version).toBe(1);

    await publish(3);
    await waitFor('version 3', () => store.currentVersion() === 3);
    expect(store.appliedVersions).toEqual([1, 3]);
    expect(sync.status().last_error).toBeNull();
  });

  it('rejects an unsigned snapshot', async () => {
    setup();
    const { store, sync, logger } = dataPlane();
    await publish(1);
    await sync.start();
    await topology.publisher.publish({ ...signSnapshot(makeSnapshot(2), SECRET), signature: '' });
    await waitFor('the rejection to be logged', () => logger.has('error', /unsigned/));
    expect(store.currentVersion()).toBe(1);
  });

  it('keeps the last good config when a snapshot cannot be loaded', async () => {
    setup();
    const { store, sync, logger } = dataPlane();
    await publish(1);
    await sync.start();
    await topology.publisher.publish(signSnapshot(makeUnloadableSnapshot(2), SECRET));
    await waitFor('the rejection to be logged', () => logger.has('error', /compile failed/));
    expect(store.currentVersion()).toBe(1);
    expect(sync.status().last_error).toMatch(/version 2 rejected: compile failed/);
  });

  it('ignores announcements of versions that are not newer, and equal hashes', async () => {
    setup();
    const { store, sync, bus } = dataPlane();
    await publish(5);
    await sync.start();
    const fetchesAfterStart = bus.fetches;
    bus.announce({ version: 5, hash: 'f'.repeat(32) });
    bus.announce({ version: 2, hash: 'e'.repeat(32) });
    bus.announce({ version: 9, hash: makeSnapshot(5).hash });
    // a newer version after them is the marker: once it is applied, the three above have been handled
    await publish(6);
    await waitFor('version 6', () => store.currentVersion() === 6);
    expect(bus.fetches).toBe(fetchesAfterStart + 1);
    expect(store.appliedVersions).toEqual([5, 6]);
  });

  it('fetches the full snapshot on a version gap, skipping the versions in between', async () => {
    setup();
    const { store, sync, bus } = dataPlane();
    await publish(1);
    await sync.start();
    bus.muted = true; // announcements of 2 and 3 are lost
    await publish(2);
    await publish(3);
    await publish(4);
    await waitFor('the three announcements to be held back', () => bus.dropped === 3);
    expect(store.currentVersion()).toBe(1);
    bus.muted = false;
    bus.announce({ version: 4, hash: makeSnapshot(4).hash });
    await waitFor('version 4', () => store.currentVersion() === 4);
    expect(store.appliedVersions).toEqual([1, 4]);
  });

  it('fetches the full snapshot after a reconnect', async () => {
    setup();
    const { store, sync, bus } = dataPlane();
    await publish(1);
    await sync.start();
    bus.muted = true;
    await publish(2);
    await waitFor('the announcement to be held back', () => bus.dropped === 1);
    expect(store.currentVersion()).toBe(1);
    bus.reconnect();
    await waitFor('version 2 after the reconnect', () => store.currentVersion() === 2);
  });

  it('retries a failed fetch with backoff until it goes through', async () => {
    setup();
    const { store, sync, bus, logger } = dataPlane({ fetchRetryMs: 50, maxFetchRetryMs: 200 });
    await publish(1);
    bus.failNextFetches = 3;
    await sync.start();
    expect(store.current).toBeNull();
    expect(sync.status().last_error).toMatch(/fetch failed: transport down/);
    await waitFor('version 1 after the retries', () => store.currentVersion() === 1);
    expect(bus.fetches).toBe(4);
    expect(logger.lines.filter((l) => l.level === 'warn' && /cannot fetch/.test(l.message))).toHaveLength(1); // one warning per outage
    expect(sync.status().last_error).toBeNull();
  });

  it('catches a lost announcement with the periodic check', async () => {
    setup();
    const { store, sync, bus } = dataPlane({ refetchIntervalMs: 100 });
    await publish(1);
    await sync.start();
    bus.muted = true;
    await publish(2);
    await waitFor('version 2 from the periodic check', () => store.currentVersion() === 2);
    const fetches = bus.fetches;
    const checks = bus.headChecks;
    await waitFor('three more periodic checks', () => bus.headChecks >= checks + 3);
    expect(bus.fetches).toBe(fetches); // nothing newer stored: the check does not download the snapshot
  });

  it('ignores a tampered disk cache and loads from the bus', async () => {
    setup();
    const cacheFile = join(dir, 'cache', 'snapshot.json');
    const first = dataPlane();
    await publish(1);
    await first.sync.start();
    await waitFor('cache written', () => {
      try {
        return JSON.parse(readFileSync(cacheFile, 'utf8')).version === 1;
      } catch {
        return false;
      }
    });
    await first.sync.stop();
    const cached = JSON.parse(readFileSync(cacheFile, 'utf8'));
    const evil = signSnapshot(makeSnapshot(7, 'evil'), 'attacker-secret-0123456789abcdef-0123');
    writeFileSync(cacheFile, JSON.stringify({ ...evil, signature: cached.signature }));

    const second = dataPlane();
    await second.sync.start();
    expect(second.logger.has('error', /rejected/)).toBe(true);
    expect(second.store.appliedVersions).toEqual([1]);
    expect(second.sync.status().source).toBe('bus');
  });

  it('keeps its disk cache sealed: the file shows nothing of the config it holds', async () => {
    setup();
    const { store, sync } = dataPlane();
    await sync.start();
    await publish(1, 'credential-in-the-config-0123456789');
    await waitFor('version 1', () => store.currentVersion() === 1);
    await sync.stop();
    const text = readFileSync(join(dir, 'cache', 'snapshot.json'), 'utf8');
    expect(JSON.parse(text).cipher).toBe('aes-256-gcm');
    expect(text).not.toContain('credential-in-the-config');
    expect(Buffer.from(JSON.parse(text).payload, 'base64').toString('latin1')).not.toContain('credential-in-the-config');
  });

  it('keeps serving its last good config when the stored snapshot is sealed under another secret or altered', async () => {
    setup();
    const { store, sync, logger } = dataPlane();
    await publish(1);
    await sync.start();
    // signed with the cluster secret, sealed under another one's key: the cipher refuses it
    const foreign = signSnapshot(makeSnapshot(2, 'foreign'), 'another-cluster-secret-0123456789abcdef');
    await topology.publisher.publish({ ...foreign, signature: createHmac('sha256', SECRET).update(foreign.payload).digest('hex') });
    await waitFor('the rejection to be logged', () => logger.has('error', /cannot be decoded/));
    expect(store.currentVersion()).toBe(1);
    const bytes = Buffer.from(signSnapshot(makeSnapshot(3, 'altered'), SECRET).payload, 'base64');
    bytes[20]! ^= 0x80;
    await topology.publisher.publish({ ...signSnapshot(makeSnapshot(3, 'altered'), SECRET), payload: bytes.toString('base64') });
    await waitFor('the second rejection to be logged', () => logger.has('error', /signature does not match/));
    expect(store.currentVersion()).toBe(1);
    expect(JSON.parse(readFileSync(join(dir, 'cache', 'snapshot.json'), 'utf8')).version).toBe(1);
  });

  it('loads the unsealed format of the earlier release, and rewrites such a cache sealed once the bus holds it sealed', async () => {
    setup();
    const cacheFile = join(dir, 'cache', 'snapshot.json');
    // an earlier control plane published version 1 unsealed; the upgraded data plane loads it and caches it as it came
    const old = signUnsealed(makeSnapshot(1, 'old-release-secret-0123'), SECRET);
    await topology.publisher.publish(old);
    const first = dataPlane();
    await first.sync.start();
    expect(first.store.currentVersion()).toBe(1);
    expect(first.logger.has('warn', /without sealing/)).toBe(true);
    await first.sync.stop();
    expect(JSON.parse(readFileSync(cacheFile, 'utf8')).payload).toBe(old.payload);

    // restarted from that cache; the upgraded control plane then publishes the same version sealed
    const second = dataPlane();
    await second.sync.start();
    expect(second.sync.status().source).toBe('cache');
    await topology.publisher.publish(signSnapshot(makeSnapshot(1, 'old-release-secret-0123'), SECRET));
    await waitFor('the cache rewritten sealed', () => JSON.parse(readFileSync(cacheFile, 'utf8')).cipher === 'aes-256-gcm');
    expect(JSON.parse(readFileSync(cacheFile, 'utf8')).payload).not.toBe(old.payload);
    expect(second.store.appliedVersions).toEqual([1]);
  });

  it('reports itself through the bus, with the serving version and hash', async () => {
    setup();
    const { store, sync } = dataPlane({ heartbeatIntervalMs: 100 });
    await publish(3);
    await sync.start();
    expect(store.currentVersion()).toBe(3);
    const listed = async () => (await topology.publisher.listDataPlanes()).find((d) => d.id === 'dp-test');
    await waitFor('the heartbeat with version 3', async () => (await listed())?.config_version === 3);
    const row = await listed();
    expect(row).toMatchObject({
      hostname: 'dp-host',
      ip: '10.1.1.1',
      version: '0.1.0',
      config_hash: makeSnapshot(3).hash,
      sync_status: 'normal',
    });
    expect(Math.abs(row!.last_seen - Date.now() / 1000)).toBeLessThan(5);
    const before = row!.last_seen;
    await waitFor('a later heartbeat', async () => (await listed())!.last_seen > before, 5000);
  });
});
