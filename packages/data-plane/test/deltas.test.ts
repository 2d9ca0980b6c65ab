import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigState, type ConfigRow, type SectionChanges, type SignedDelta, type Snapshot, type SnapshotDelta } from '@gatehouse/core';
import { deleteRedisPrefix, requireRedis, SHARED_REDIS_URL, uniqueRedisPrefix } from '@gatehouse/testkit';
import { MemoryBus, RedisBus, signDelta, signSnapshot, type ConfigBus } from '@gatehouse/sync';
import { DataPlaneSync, type DataPlaneSyncOptions } from '../src';
import { InstrumentedBus } from './support/instrumented-bus';
import { makeSnapshot, MemoryLogger, waitFor } from './support/snapshots';

const SECRET = 'delta-test-secret-0123456789abcdef';

/** The control plane's side, by hand: a config state that produces signed deltas adding consumers. */
class Producer {
  state: ConfigState;
  constructor(readonly snapshot: Snapshot) {
    this.state = ConfigState.fromSnapshot(snapshot, { copyRows: true });
  }
  next(changes: Record<string, SectionChanges>, secret = SECRET): { delta: SnapshotDelta; signed: SignedDelta } {
    const { hash, hashes } = this.state.hashAfter(changes);
    const delta: SnapshotDelta = { format: 'delta', from: this.state.version, version: this.state.version + 1, created_at: 1, hash, hashes, changes };
    this.state.applyDelta(delta);
    return { delta, signed: signDelta(delta, secret) };
  }
  addConsumer(name: string): { delta: SnapshotDelta; signed: SignedDelta } {
    const row: ConfigRow = { id: `00000000-0000-4000-9000-${String(name.length * 7919 + name.charCodeAt(name.length - 1)).padStart(12, '0')}-${name}`, username: name };
    return this.next({ consumers: { upsert: [row], delete: [] } });
  }
}

/** The data plane's side: a config state that deltas are applied to (what the data plane's compile does, minus compiling). */
class Follower {
  state: ConfigState | null = null;
  fulls = 0;
  deltas = 0;
  /** the next delta fails to apply (what a compile error or drifted rows would do) */
  failNext = false;
  apply = (snapshot: Snapshot) => {
    this.state = ConfigState.fromSnapshot(snapshot);
    this.fulls++;
  };
  applyDelta = (delta: SnapshotDelta) => {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('cannot apply');
    }
    this.state!.applyDelta(delta);
    this.deltas++;
  };
  currentVersion = () => this.state?.version ?? null;
  currentHash = () => this.state?.hash() ?? null;
  usernames = () => [...(this.state?.section('consumers').values() ?? [])].map((c) => c.username).sort();
}

const topologies: Array<[string, () => { bus: ConfigBus; dpBus: () => ConfigBus; cleanup(): Promise<void> }]> = [
  ['MemoryBus (embedded)', () => {
    const bus = new MemoryBus();
    return { bus, dpBus: () => bus, cleanup: () => bus.close() };
  }],
  ['RedisBus (cluster)', () => {
    const prefix = uniqueRedisPrefix('deltas');
    const buses: ConfigBus[] = [];
    const make = () => {
      const b = new RedisBus({ url: SHARED_REDIS_URL, prefix });
      buses.push(b);
      return b;
    };
    return { bus: make(), dpBus: make, cleanup: async () => {
      await Promise.all(buses.map((b) => b.close()));
      await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
    } };
  }],
];

beforeAll(async () => {
  await requireRedis(SHARED_REDIS_URL);
});

describe.each(topologies)('deltas over %s', (_name, make) => {
  let topology: ReturnType<typeof make>;
  let producer: Producer;
  const running: DataPlaneSync[] = [];
  let dir: string;

  /** A data plane's sync that feeds `follower` from `bus`, without heartbeats or periodic refetches. */
  function syncOf(follower: Follower, bus: ConfigBus, cacheFile: string | null, id: string, extra: Partial<DataPlaneSyncOptions> = {}): DataPlaneSync {
    const { apply, applyDelta, currentVersion, currentHash } = follower;
    return new DataPlaneSync({ bus, secret: SECRET, cacheFile, apply, applyDelta, currentVersion, currentHash, identity: { id }, logger: new MemoryLogger(), heartbeatIntervalMs: 0, refetchIntervalMs: 0, ...extra });
  }

  async function start(follower: Follower, options: { cacheFile?: string | null; bus?: ConfigBus } = {}) {
    const bus = new InstrumentedBus(options.bus ?? topology.dpBus());
    const logger = new MemoryLogger();
    const sync = syncOf(follower, bus, options.cacheFile ?? null, 'dp', { logger });
    running.push(sync);
    await sync.start();
    return { sync, bus, logger };
  }

  const publish = async (d: { signed: SignedDelta }) => expect(await topology.bus.publishDelta(d.signed)).toBe(true);

  beforeEach(async () => {
    topology = make();
    dir = mkdtempSync(join(tmpdir(), 'gh-deltas-'));
    producer = new Producer(makeSnapshot(1, 'base'));
    expect(await topology.bus.publish(signSnapshot(producer.snapshot, SECRET))).toBe(true);
  });

  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop();
    await topology.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies announced deltas in order without fetching anything', async () => {
    const follower = new Follower();
    const { bus } = await start(follower);
    const fetchesAfterStart = bus.fetches;
    for (const name of ['a', 'b', 'c']) await publish(producer.addConsumer(name));
    await waitFor('version 4', () => follower.currentVersion() === 4);
    expect(follower.usernames()).toEqual(['a', 'b', 'c']);
    expect(follower.deltas).toBe(3);
    expect(bus.fetches).toBe(fetchesAfterStart);
    expect(follower.currentHash()).toBe(producer.state.hash());
  });

  it('a gap (missed announcements) is filled from the kept deltas', async () => {
    const follower = new Follower();
    const { bus } = await start(follower);
    bus.muted = true;
    await publish(producer.addConsumer('a'));
    await publish(producer.addConsumer('b'));
    await waitFor('the muted announcements', () => bus.dropped === 2);
    bus.muted = false;
    await publish(producer.addConsumer('c'));
    await waitFor('version 4', () => follower.currentVersion() === 4);
    expect(follower.usernames()).toEqual(['a', 'b', 'c']);
    expect(follower.fulls).toBe(1);
  });

  it('duplicated and reordered deltas are ignored or refetched, never applied out of order', async () => {
    const follower = new Follower();
    const { bus } = await start(follower);
    const first = producer.addConsumer('a');
    await publish(first);
    await waitFor('version 2', () => follower.currentVersion() === 2);
    bus.announce({ version: 2, hash: first.delta.hash, delta: first.signed }); // a duplicate
    const second = producer.addConsumer('b');
    const third = producer.addConsumer('c');
    // the third arrives before the second: a gap, so the bus is asked; it holds neither yet
    bus.announce({ version: 4, hash: third.delta.hash, delta: third.signed });
    await waitFor('the gap noticed', () => bus.fetches >= 2);
    expect(follower.currentVersion()).toBe(2);
    await publish(second);
    await publish(third);
    await waitFor('version 4', () => follower.currentVersion() === 4);
    expect(follower.usernames()).toEqual(['a', 'b', 'c']);
    expect(follower.currentHash()).toBe(producer.state.hash());
  });

  it('a stored snapshot that deltas overtake while it is decoded is not loaded over them', async () => {
    const follower = new Follower();
    const loaded: number[] = [];
    const { apply, applyDelta } = follower;
    follower.apply = (snapshot) => {
      apply(snapshot);
      loaded.push(snapshot.version);
    };
    follower.applyDelta = (delta) => {
      applyDelta(delta);
      loaded.push(delta.version);
    };
    const { sync, bus } = await start(follower);
    const second = producer.addConsumer('a');
    const stored = signSnapshot(producer.state.toSnapshot(), SECRET);
    const third = producer.addConsumer('b');
    // the fetch brings the snapshot of version 2; deltas 2 and 3 arrive while its payload is decoded
    bus.fetchLatest = async () => {
      setImmediate(() => {
        bus.announce({ version: 2, hash: second.delta.hash, delta: second.signed });
        bus.announce({ version: 3, hash: third.delta.hash, delta: third.signed });
      });
      return stored;
    };
    await sync.syncNow();
    expect(loaded).toEqual([1, 2, 3]);
    expect(follower.currentVersion()).toBe(3);
    expect(follower.usernames()).toEqual(['a', 'b']);
  });

  it('a forged delta is refused and the data plane keeps serving, then follows genuine ones', async () => {
    const follower = new Follower();
    const { bus, sync, logger } = await start(follower);
    const forger = new Producer(makeSnapshot(1, 'base'));
    const forged = forger.next({ consumers: { upsert: [{ id: 'evil', username: 'mallory' }], delete: [] } }, 'another-secret-0123456789abcdef');
    bus.announce({ version: 2, hash: forged.delta.hash, delta: forged.signed });
    await waitFor('the refusal', () => logger.has('error', /delta rejected/));
    expect(follower.usernames()).toEqual([]);
    expect(sync.status().last_error).toMatch(/signature/);
    await publish(producer.addConsumer('a'));
    await waitFor('version 2', () => follower.currentVersion() === 2 && follower.usernames().join() === 'a');
    expect(follower.currentHash()).toBe(producer.state.hash());
  });

  it('a delta that does not apply falls back to the full snapshot and the kept deltas', async () => {
    const follower = new Follower();
    await start(follower);
    await publish(producer.addConsumer('a'));
    await waitFor('version 2', () => follower.currentVersion() === 2);
    follower.failNext = true;
    await publish(producer.addConsumer('b'));
    await waitFor('version 3', () => follower.currentVersion() === 3);
    expect(follower.usernames()).toEqual(['a', 'b']);
    expect(follower.fulls).toBe(2);
    expect(follower.currentHash()).toBe(producer.state.hash());
  });

  it('a genuine delta whose hash the data plane cannot reach is refused (its rows are not taken)', async () => {
    const follower = new Follower();
    await start(follower);
    const wrong = new Producer(makeSnapshot(1, 'base'));
    const { delta } = wrong.addConsumer('a');
    const signed = signDelta({ ...delta, hash: 'f'.repeat(32) }, SECRET);
    expect(() => new Producer(makeSnapshot(1, 'base')).state.applyDelta({ ...delta, hash: 'f'.repeat(32) })).toThrow(/announced/);
    expect(await topology.bus.publishDelta(signed)).toBe(true);
    await waitFor('a refusal', async () => follower.fulls >= 2);
    expect(follower.usernames()).toEqual([]);
  });

  it('a data plane joining late loads the stored snapshot and the kept deltas after it', async () => {
    await publish(producer.addConsumer('a'));
    expect(await topology.bus.storeSnapshot(signSnapshot(producer.state.toSnapshot(), SECRET))).toBe(true);
    await publish(producer.addConsumer('b'));
    await publish(producer.addConsumer('c'));
    const follower = new Follower();
    await start(follower);
    expect(follower.currentVersion()).toBe(4);
    expect(follower.usernames()).toEqual(['a', 'b', 'c']);
    expect(follower.fulls).toBe(1);
    expect(follower.deltas).toBe(2);
  });

  it('the disk cache moves onto a newer stored snapshot once deltas pause, and a restart still serves the head', async () => {
    const cacheFile = join(dir, 'cache.json');
    const follower = new Follower();
    await start(follower, { cacheFile });
    for (let i = 0; i < 2100; i++) await publish(producer.addConsumer(`bulk-${i}`));
    await waitFor('version 2101', () => follower.currentVersion() === 2101);
    expect(await topology.bus.storeSnapshot(signSnapshot(producer.state.toSnapshot(), SECRET))).toBe(true);
    await publish(producer.addConsumer('after-store'));
    await waitFor('the compacted cache', () => (JSON.parse(readFileSync(cacheFile, 'utf8')) as { version: number }).version === 2101, 15_000);
    await waitFor('the delta after it', () => readFileSync(`${cacheFile}.deltas`, 'utf8').trim().split('\n').length === 1);
    const restarted = new Follower();
    const sync = syncOf(restarted, new MemoryBus(), cacheFile, 'dp3');
    await sync.restoreFromCache();
    expect(restarted.currentVersion()).toBe(2102);
    expect(restarted.deltas).toBe(1);
    expect(restarted.currentHash()).toBe(producer.state.hash());
  }, 30_000);

  it('the disk cache moves onto a snapshot the control plane stores only after the deltas paused', async () => {
    const cacheFile = join(dir, 'late-store.json');
    const follower = new Follower();
    const { bus } = await start(follower, { cacheFile });
    for (let i = 0; i < 2100; i++) await publish(producer.addConsumer(`late-${i}`));
    await waitFor('version 2101', () => follower.currentVersion() === 2101);
    // the first try, once the deltas paused, finds no stored snapshot newer than the cached one
    const fetches = bus.fetches;
    await waitFor('a compaction try', () => bus.fetches > fetches, 15_000);
    expect((JSON.parse(readFileSync(cacheFile, 'utf8')) as { version: number }).version).toBe(1);
    expect(await topology.bus.storeSnapshot(signSnapshot(producer.state.toSnapshot(), SECRET))).toBe(true);
    await waitFor('the compacted cache', () => (JSON.parse(readFileSync(cacheFile, 'utf8')) as { version: number }).version === 2101, 15_000);
    // the snapshot is written first, then the deltas it holds are dropped
    await waitFor('no cached delta left', () => readFileSync(`${cacheFile}.deltas`, 'utf8') === '');
  }, 30_000);

  it('a restart serves the cached snapshot and the cached deltas, with the bus unreachable', async () => {
    const cacheFile = join(dir, 'cache.json');
    const follower = new Follower();
    const first = await start(follower, { cacheFile });
    await publish(producer.addConsumer('a'));
    await publish(producer.addConsumer('b'));
    await waitFor('version 3', () => follower.currentVersion() === 3);
    await first.sync.stop();
    const restarted = new Follower();
    const offline = new RedisBus({ url: 'redis://127.0.0.1:1', prefix: 'nowhere:', connectTimeoutMs: 200, maxReconnectDelayMs: 200 });
    try {
      const sync = syncOf(restarted, offline, cacheFile, 'dp2', { fetchRetryMs: 0 });
      await sync.restoreFromCache();
      expect(restarted.currentVersion()).toBe(3);
      expect(restarted.usernames()).toEqual(['a', 'b']);
      expect(restarted.currentHash()).toBe(producer.state.hash());
      await sync.stop();
    } finally {
      await offline.close();
    }
  });
});
