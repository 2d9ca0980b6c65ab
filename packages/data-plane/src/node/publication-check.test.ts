import { describe, expect, it } from '@jest/globals';
import { ConfigState, type SectionChanges, type SnapshotDelta } from '@gatehouse/core';
import { makeConsumer, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { PublicationCheck } from './publication-check';

function nextDelta(state: ConfigState, changes: Record<string, SectionChanges>): SnapshotDelta {
  const { hash, hashes } = state.hashAfter(changes);
  const delta: SnapshotDelta = { format: 'delta', from: state.version, version: state.version + 1, created_at: 1, hash, hashes, changes };
  state.applyDelta(delta);
  return delta;
}

describe('PublicationCheck', () => {
  const service = makeService({ name: 'svc', url: 'http://upstream.test' });

  it('refuses a snapshot the data plane would not compile, and a delta before any snapshot', () => {
    const check = new PublicationCheck();
    const orphan = makeRoute({ paths: ['/x'], service: { id: makeService({ name: 'gone', url: 'http://gone.test' }).id } });
    expect(() => check.check(makeSnapshot({ services: [service], routes: [orphan] }))).toThrow(/references missing service/);
    expect(() => check.load(makeSnapshot({ services: [service], routes: [orphan] }))).toThrow(/references missing service/);
    const state = ConfigState.fromSnapshot(makeSnapshot({ services: [service] }), { copyRows: true });
    expect(() => check.applyDelta(nextDelta(state, { consumers: { upsert: [makeConsumer({ username: 'a' })], delete: [] } }))).toThrow(/no configuration loaded/);
  });

  it('checks deltas against the last checked config: one that follows it passes, one that skips a version or drops a routed service is refused', () => {
    const check = new PublicationCheck();
    const route = makeRoute({ paths: ['/r'], service: { id: service.id } });
    const snapshot = makeSnapshot({ services: [service], routes: [route] }, 3);
    check.load(snapshot);
    const state = ConfigState.fromSnapshot(snapshot, { copyRows: true });
    check.applyDelta(nextDelta(state, { consumers: { upsert: [makeConsumer({ username: 'a' })], delete: [] } }));
    const dropsService = { ...state.toSnapshot() };
    const probe = ConfigState.fromSnapshot(dropsService, { copyRows: true });
    expect(() => check.applyDelta(nextDelta(probe, { services: { upsert: [], delete: [service.id] } }))).toThrow(/service/);
    nextDelta(state, { consumers: { upsert: [makeConsumer({ username: 'b' })], delete: [] } });
    const skipped = nextDelta(state, { consumers: { upsert: [makeConsumer({ username: 'c' })], delete: [] } });
    expect(() => check.applyDelta(skipped)).toThrow();
  });
});
