// Decision 19 on the data plane's side: a snapshot of a later cluster epoch (the control plane's database was reset
// or restored) is loaded whatever its version, once; a replay of an earlier epoch or of an older version of the
// serving epoch never is. The disk cache is judged by the same rule.
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newEpoch } from '@gatehouse/core';
import { deleteRedisPrefix, requireRedis, SHARED_REDIS_URL, uniqueRedisPrefix } from '@gatehouse/testkit';
import { MemoryBus, RedisBus, signSnapshot, type ConfigBus } from '@gatehouse/sync';
import { DataPlaneSync } from '../src';
import { InstrumentedBus } from './support/instrumented-bus';
import { makeSnapshot, MemoryLogger, ServingStore, waitFor } from './support/snapshots';

const SECRET = 'cluster-epoch-test-secret-of-32-bytes!';
const OLD = newEpoch(null, Date.parse('2026-01-01T00:00:00Z'));
const NEW = newEpoch(null, Date.parse('2026-02-01T00:00:00Z'));
const NEWER = newEpoch(null, Date.parse('2026-03-01T00:00:00Z'));

beforeAll(async () => {
  await requireRedis(SHARED_REDIS_URL);
});

const buses: Array<[string, () => { bus: ConfigBus; cleanup(): Promise<void> }]> = [
  ['MemoryBus', () => {
    const bus = new MemoryBus();
    return { bus, cleanup: () => bus.close() };
  }],
  ['RedisBus', () => {
    const prefix = uniqueRedisPrefix('epoch');
    const bus = new RedisBus({ url: SHARED_REDIS_URL, prefix });
    return { bus, cleanup: async () => {
      await bus.close();
      await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
    } };
  }],
];

describe.each(buses)('cluster epochs over %s', (_name, makeBus) => {
  let handle: ReturnType<typeof makeBus>;
  let dir: string;
  const running: DataPlaneSync[] = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.stop()));
    await handle.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  function setup() {
    handle = makeBus();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-epoch-'));
  }

  function dataPlane() {
    const store = new ServingStore();
    const logger = new MemoryLogger();
    const bus = new InstrumentedBus(handle.bus);
    const sync = new DataPlaneSync({
      bus,
      secret: SECRET,
      cacheFile: join(dir, 'snapshot.json'),
      apply: store.apply,
      currentVersion: store.currentVersion,
      identity: { id: 'dp-epoch' },
      logger,
      heartbeatIntervalMs: 0,
      refetchIntervalMs: 0,
    });
    running.push(sync);
    return { store, logger, bus, sync };
  }

  const publish = (version: number, epoch: string, label?: string, replace = false) =>
    handle.bus.publish(signSnapshot(makeSnapshot(version, label ?? `${epoch}-${version}`, epoch), SECRET), { replace });

  it('loads a snapshot of a later epoch whatever its version, and refuses older versions of that epoch afterwards', async () => {
    setup();
    const { store, sync, logger } = dataPlane();
    await publish(50, OLD);
    await sync.start();
    expect(store.currentVersion()).toBe(50);

    await publish(3, NEW); // the database was reset: version 3 of a new epoch
    await waitFor('version 3 of the new epoch', () => store.currentVersion() === 3);
    expect(sync.status()).toMatchObject({ config_version: 3, config_epoch: NEW });
    expect(logger.has('warn', /new cluster epoch/)).toBe(true);

    // a replay of the old epoch's version 50, forced into the bus, then a marker of the new epoch
    await publish(50, OLD, 'replayed', true);
    await publish(2, NEW, 'older version of the new epoch', true);
    await publish(4, NEW);
    await waitFor('version 4 of the new epoch', () => store.currentVersion() === 4);
    expect(store.appliedVersions).toEqual([50, 3, 4]);
    expect(store.current!.config.services[0]!.name).toBe(`${NEW}-4`);
  });

  it('loads a later epoch even when its config hash equals the serving one', async () => {
    setup();
    const { store, sync } = dataPlane();
    await publish(7, OLD, 'same content');
    await sync.start();
    await publish(1, NEW, 'same content');
    await waitFor('the new epoch', () => sync.status().config_epoch === NEW);
    expect(store.currentVersion()).toBe(1);
  });

  it('a data plane restarting with a cache of an earlier epoch moves to the bus\'s later epoch', async () => {
    setup();
    const first = dataPlane();
    await publish(40, OLD);
    await first.sync.start();
    await waitFor('the cache written', () => first.store.currentVersion() === 40);
    await first.sync.stop();

    await publish(2, NEW); // reset while the data plane was down: the bus holds a lower version of a later epoch
    const second = dataPlane();
    await second.sync.start();
    expect(second.store.appliedVersions).toEqual([40, 2]);
    expect(second.sync.status()).toMatchObject({ config_version: 2, config_epoch: NEW, source: 'bus' });
  });

  it('a data plane restarting with a cache of a later epoch ignores a replay of an earlier one in the bus', async () => {
    setup();
    const first = dataPlane();
    await publish(2, NEWER);
    await first.sync.start();
    await first.sync.stop();

    await publish(90, OLD, 'replay', true);
    const second = dataPlane();
    await second.sync.start();
    expect(second.store.appliedVersions).toEqual([2]);
    expect(second.sync.status()).toMatchObject({ config_version: 2, config_epoch: NEWER, source: 'cache' });
    expect(second.logger.has('warn', /older than the serving one/)).toBe(true);
  });

  it('a later epoch whose snapshot does not load is refused like any other; the next one of that epoch is loaded', async () => {
    setup();
    const { store, sync, logger } = dataPlane();
    await publish(9, OLD);
    await sync.start();
    const unloadable = makeSnapshot(1, 'unloadable', NEW);
    unloadable.config.consumers = [{ id: 'c', username: 'unloadable' } as never];
    await handle.bus.publish(signSnapshot(unloadable, SECRET));
    await waitFor('the rejection', () => logger.has('error', /rejected/));
    expect(sync.status()).toMatchObject({ config_version: 9, config_epoch: OLD });
    await publish(2, NEW);
    await waitFor('version 2 of the new epoch', () => store.currentVersion() === 2);
    expect(store.appliedVersions).toEqual([9, 2]);
  });

  it('the bus keeps a head of a later epoch against an earlier one, unless told to replace it', async () => {
    setup();
    expect(await publish(1, NEWER)).toBe(true);
    expect(await publish(99, OLD)).toBe(false);
    expect((await handle.bus.latestAnnouncement())).toMatchObject({ version: 1, epoch: NEWER });
    expect(await publish(5, NEWER)).toBe(true);
    expect(await publish(4, NEWER)).toBe(false);
    expect(await publish(99, OLD, 'forced', true)).toBe(true);
    expect((await handle.bus.latestAnnouncement())).toMatchObject({ version: 99, epoch: OLD });
    expect(await publish(1, NEW)).toBe(true);
    const latest = await handle.bus.fetchLatest();
    expect(latest).toMatchObject({ version: 1, epoch: NEW });
  });
});
