import { describe, expect, it } from '@jest/globals';
import { BatchQueue } from './queue';
import { queueSchema } from './schema';

const quiet = { warn: () => {}, error: () => {} };

async function until(check: () => boolean): Promise<void> {
  const stop = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > stop) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('BatchQueue (Kong plugin queue semantics)', () => {
  it('sends a full batch at once and a partial one after max_coalescing_delay', async () => {
    const batches: number[][] = [];
    const q = new BatchQueue<number>('t', queueSchema.parse({ max_batch_size: 3, max_coalescing_delay: 0.05 }), async (b) => void batches.push(b), quiet);
    for (const n of [1, 2, 3, 4]) q.add(n);
    await until(() => batches.length === 2);
    expect(batches).toEqual([[1, 2, 3], [4]]);
    expect(q.stats).toMatchObject({ sent: 4, entries: 0, dropped: 0, failed: 0 });
  });

  it('retries with exponential backoff capped at max_retry_delay, then succeeds', async () => {
    const attempts: number[] = [];
    let failures = 3;
    const q = new BatchQueue<string>('t', queueSchema.parse({ max_coalescing_delay: 0, initial_retry_delay: 0.01, max_retry_delay: 0.02 }), async () => {
      attempts.push(Date.now());
      if (failures-- > 0) throw new Error('down');
    }, quiet);
    q.add('a');
    await until(() => q.stats.sent === 1);
    expect(attempts).toHaveLength(4);
    expect(q.stats).toMatchObject({ sent: 1, failed: 0 });
  });

  it('gives a batch up once max_retry_time has passed', async () => {
    const q = new BatchQueue<string>('t', queueSchema.parse({ max_coalescing_delay: 0, initial_retry_delay: 0.01, max_retry_delay: 0.01, max_retry_time: 0.05 }), async () => {
      throw new Error('down');
    }, quiet);
    q.add('a');
    await until(() => q.stats.failed === 1);
    expect(q.stats).toMatchObject({ sent: 0, failed: 1, entries: 0 });
  });

  it('drops and counts entries beyond max_entries (and max_bytes)', async () => {
    let release: () => void = () => {};
    const q = new BatchQueue<string>('t', queueSchema.parse({ max_coalescing_delay: 0, max_entries: 2 }), () => new Promise<void>((r) => (release = r)), quiet);
    expect([q.add('a'), q.add('b'), q.add('c'), q.add('d')]).toEqual([true, true, false, false]);
    expect(q.stats).toMatchObject({ entries: 2, dropped: 2 });
    release();
    await until(() => q.stats.sent >= 1);
    const bytes = new BatchQueue<string>('t', queueSchema.parse({ max_coalescing_delay: 60, max_bytes: 5 }), async () => {}, quiet, (e) => e.length);
    expect([bytes.add('abc'), bytes.add('de'), bytes.add('f')]).toEqual([true, true, false]);
    bytes.stop();
    q.stop();
  });

  it('has Kong\'s defaults', () => {
    expect(queueSchema.parse({})).toEqual({
      max_batch_size: 1,
      max_coalescing_delay: 1,
      max_entries: 10000,
      max_bytes: null,
      max_retry_time: 60,
      initial_retry_delay: 0.01,
      max_retry_delay: 60,
      concurrency_limit: 1,
    });
  });
});
