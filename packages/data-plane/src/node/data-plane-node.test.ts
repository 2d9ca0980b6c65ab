import { describe, expect, it } from '@jest/globals';
import { ConfigState, type Snapshot, type SnapshotDelta } from '@gatehouse/core';
import { MemoryBus, signDelta, signSnapshot } from '@gatehouse/sync';
import { makeConsumer, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { LoadReclaimer } from '../memory/reclaim-after-load';
import { BusFeed } from './bus-feed';
import { DataPlaneNode, type ForwardedChange } from './data-plane-node';

const SECRET = 'data-plane-node-test-secret-0123456789';
const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

/** a node fed by a memory bus, forwarding what it applies as a primary does */
function nodeOnBus() {
  const bus = new MemoryBus();
  const forwarded: Array<Snapshot | ForwardedChange> = [];
  let full: (() => Snapshot | null) | null = null;
  const counts = { applied: 0, refused: 0 };
  const feed = new BusFeed({ bus, secret: SECRET, cacheFile: null, identity: { id: 'node-test' }, logger: quiet, heartbeatIntervalMs: 0, refetchIntervalMs: 0, fetchRetryMs: 0 });
  const node = new DataPlaneNode({
    feed,
    log: quiet,
    reclaimer: new LoadReclaimer(60_000, () => null),
    counters: { configApplied: () => counts.applied++, configRefused: () => counts.refused++ },
    forward: {
      publish: (snapshot) => forwarded.push(snapshot),
      publishChange: (change, current) => {
        forwarded.push(change);
        full = current;
      },
    },
  });
  return { bus, feed, node, forwarded, counts, full: () => full?.() ?? null };
}

describe('DataPlaneNode fed by the bus', () => {
  const service = makeService({ name: 'svc', url: 'http://upstream.test' });

  it('loads the stored snapshot, applies a delta, and forwards both; the full config after the delta is at hand', async () => {
    const { bus, node, feed, forwarded, counts, full } = nodeOnBus();
    const snapshot = makeSnapshot({ services: [service] }, 3);
    await bus.publish(signSnapshot(snapshot, SECRET));
    await node.open();
    await node.follow();
    expect(node.serving()).toEqual({ version: 3, hash: snapshot.hash });
    expect(forwarded).toEqual([snapshot]);

    const state = ConfigState.fromSnapshot(snapshot, { copyRows: true });
    const changes = { consumers: { upsert: [makeConsumer({ username: 'alice' })], delete: [] } };
    const { hash, hashes } = state.hashAfter(changes);
    const delta: SnapshotDelta = { format: 'delta', from: 3, version: 4, created_at: 1, hash, hashes, changes };
    state.applyDelta(delta);
    await bus.publishDelta(signDelta(delta, SECRET));
    await until(() => node.serving()?.version === 4);
    expect([...node.holder.current.consumers.byUsername.keys()]).toEqual(['alice']);
    expect(forwarded[1]).toMatchObject({ kind: 'delta', delta: { version: 4 } });
    expect(full()).toMatchObject({ version: 4, hash: state.hash() });
    expect(counts).toEqual({ applied: 2, refused: 0 });
    expect(feed.status()).toMatchObject({ config_version: 4, config_hash: state.hash(), source: 'bus', last_error: null });
    await node.close();
    await bus.close();
  });

  it('refuses a snapshot that does not compile: counted, not forwarded, and the old config keeps serving', async () => {
    const { bus, node, feed, forwarded, counts } = nodeOnBus();
    const good = makeSnapshot({ services: [service] }, 1);
    await bus.publish(signSnapshot(good, SECRET));
    await node.open();
    await node.follow();
    const orphan = makeRoute({ paths: ['/x'], service: { id: makeService({ name: 'gone', url: 'http://gone.test' }).id } });
    await bus.publish(signSnapshot(makeSnapshot({ services: [service], routes: [orphan] }, 2), SECRET));
    await until(() => counts.refused === 1);
    expect(node.serving()).toEqual({ version: 1, hash: good.hash });
    expect(forwarded).toEqual([good]);
    expect(feed.status().last_error).toMatch(/snapshot version 2 rejected: .*references missing service/);
    await node.close();
    await bus.close();
  });
});
