import { describe, expect, it } from '@jest/globals';
import { LoadReclaimer } from './reclaim-after-load';

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition(); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
  }
}

describe('LoadReclaimer', () => {
  it('collects once after loads in quick succession', async () => {
    let calls = 0;
    const reclaimer = new LoadReclaimer(30, () => () => void calls++);
    reclaimer.loaded();
    reclaimer.loaded();
    reclaimer.loaded();
    expect(reclaimer.pending).toBe(true);
    await until(() => !reclaimer.pending);
    expect(calls).toBe(1);
    expect(reclaimer.ran).toBe(1);
    reclaimer.loaded();
    await until(() => !reclaimer.pending);
    expect(calls).toBe(2);
  });

  it('counts rows changed by deltas as a full load once they add up to one, and waits for the deltas to pause', async () => {
    let calls = 0;
    const reclaimer = new LoadReclaimer(30, () => () => void calls++, 100);
    // rows upserted and deleted, in every section, count
    const delta = (rows: number) => ({ changes: { consumers: { upsert: new Array(rows - 1).fill({ id: 'c' }), delete: [] }, routes: { upsert: [], delete: ['r'] } } });
    for (let i = 0; i < 9; i++) reclaimer.deltaApplied(delta(10));
    expect(reclaimer.pending).toBe(false);
    reclaimer.deltaApplied(delta(10));
    expect(reclaimer.pending).toBe(true);
    // further deltas while one is pending push it back, one collection for the burst
    reclaimer.deltaApplied(delta(1));
    await until(() => !reclaimer.pending);
    expect(calls).toBe(1);
    // the count starts again after it
    reclaimer.deltaApplied(delta(99));
    expect(reclaimer.pending).toBe(false);
  });

  it('runs nothing once cancelled, nor where no collector is available', async () => {
    let calls = 0;
    const cancelled = new LoadReclaimer(10, () => () => void calls++);
    cancelled.loaded();
    cancelled.cancel();
    expect(cancelled.pending).toBe(false);
    const without = new LoadReclaimer(10, () => null);
    without.loaded();
    await until(() => !without.pending);
    expect(without.ran).toBe(0);
    expect(calls).toBe(0);
  });

  it("runs V8's full collection: an unreachable object is gone after it", async () => {
    let ref: WeakRef<object> | null = null;
    (() => {
      ref = new WeakRef({ payload: new Array(1000).fill('x') });
    })();
    // a WeakRef's target lives at least until the job that made it ends
    await new Promise((r) => setImmediate(r));
    const reclaimer = new LoadReclaimer(1);
    reclaimer.loaded();
    await until(() => !reclaimer.pending);
    expect(reclaimer.ran).toBe(1);
    expect(ref!.deref()).toBeUndefined();
  });
});
