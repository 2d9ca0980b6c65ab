import { describe, expect, it } from '@jest/globals';
import { buildSnapshot, ConfigState, emptyConfig, type SectionChanges, type SnapshotDelta } from '@gatehouse/core';
import type { CompiledConfig } from '../compile/types';
import { LoadReclaimer } from '../memory/reclaim-after-load';
import { DataPlaneNode } from '../node/data-plane-node';
import type { ConfigMessage } from './messages';
import { deliverConfigMessage } from './primary-feed';

const noFeed = { open: async () => {}, follow: async () => {}, close: async () => {} };

/** what a worker's node serves after taking `message` while serving `current` */
function compileConfigMessage(message: ConfigMessage, current: CompiledConfig | undefined): CompiledConfig {
  const node = new DataPlaneNode({ feed: noFeed, log: { warn: () => {} }, reclaimer: new LoadReclaimer(60_000, () => null), countsRefusedDeltas: false });
  if (current) node.holder.swap(current);
  deliverConfigMessage(node, message);
  return node.holder.current;
}

const consumer = (n: number) => ({ id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, username: `user-${n}` });

/** a delta after `state`, as the control plane makes them (state advanced past it) */
function nextDelta(state: ConfigState, changes: Record<string, SectionChanges>): SnapshotDelta {
  const { hash, hashes } = state.hashAfter(changes);
  const delta: SnapshotDelta = { format: 'delta', from: state.version, version: state.version + 1, created_at: 1, hash, hashes, changes };
  state.applyDelta(delta);
  return delta;
}

describe('proxy worker config messages', () => {
  it('a delta moves the compiled config to the delta version with the same result as compiling the full config', () => {
    const config = emptyConfig();
    config.consumers = [consumer(1)] as typeof config.consumers;
    const snapshot = buildSnapshot(5, config, 1);
    const producer = ConfigState.fromSnapshot(snapshot, { copyRows: true });
    const first = compileConfigMessage({ gatehouse: 'config', kind: 'snapshot', snapshot }, undefined);
    const delta = nextDelta(producer, { consumers: { upsert: [consumer(2)], delete: [consumer(1).id] } });

    const after = compileConfigMessage({ gatehouse: 'config', kind: 'delta', delta }, first);
    expect(after.version).toBe(6);
    expect(after.hash).toBe(producer.hash());
    expect([...after.consumers.byUsername.keys()]).toEqual(['user-2']);
    const full = compileConfigMessage({ gatehouse: 'config', kind: 'snapshot', snapshot: producer.toSnapshot() }, first);
    expect(full.hash).toBe(after.hash);
    expect([...full.consumers.byId.keys()]).toEqual([...after.consumers.byId.keys()]);
  });

  it('a delta that does not follow the worker config throws (the worker then asks for the full one); relabel only moves the version', () => {
    const snapshot = buildSnapshot(5, emptyConfig(), 1);
    const producer = ConfigState.fromSnapshot(snapshot, { copyRows: true });
    const compiled = compileConfigMessage({ gatehouse: 'config', kind: 'snapshot', snapshot }, undefined);
    nextDelta(producer, { consumers: { upsert: [consumer(1)], delete: [] } });
    const skipped = nextDelta(producer, { consumers: { upsert: [consumer(2)], delete: [] } });
    expect(() => compileConfigMessage({ gatehouse: 'config', kind: 'delta', delta: skipped }, compiled)).toThrow();
    expect(compiled.version).toBe(5);

    const relabelled = compileConfigMessage({ gatehouse: 'config', kind: 'relabel', version: 9 }, compiled);
    expect(relabelled.version).toBe(9);
    expect(relabelled.hash).toBe(compiled.hash);
    expect(relabelled.router).toBe(compiled.router);
  });
});
