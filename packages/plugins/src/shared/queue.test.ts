import { describe, expect, it } from '@jest/globals';
import { BatchQueue, type BatchHandler, type QueueSpec } from './queue';
import { PluginQueues } from './plugin-queues';
import { pluginQueueConfig, queueField, queueSchema, type QueueConfig } from './queue-schema';

function recorder() {
  const lines: string[] = [];
  return { lines, log: { error: (m: string) => lines.push(`error ${m}`), warn: (m: string) => lines.push(`warn ${m}`), info: (m: string) => lines.push(`info ${m}`) } };
}

async function until(check: () => boolean): Promise<void> {
  const stop = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > stop) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function spec<T>(config: Partial<QueueConfig>, handler: BatchHandler<T>, name = 'q'): QueueSpec<T> {
  return { name, logTag: 'test plugin p1', owner: 'p1', config: queueSchema.parse(config), handler };
}

/** a handler that holds every batch until released, recording what it got */
function gate<T>() {
  const batches: T[][] = [];
  let open: () => void = () => {};
  let opened = new Promise<void>((r) => (open = r));
  return {
    batches,
    handler: async (b: T[]) => {
      batches.push(b);
      await opened;
    },
    release: () => {
      open();
      opened = new Promise<void>((r) => (open = r));
    },
  };
}

describe('BatchQueue (Kong plugin queue semantics)', () => {
  it('sends a full batch at once and a partial one after max_coalescing_delay', async () => {
    const batches: number[][] = [];
    const q = new BatchQueue(spec<number>({ max_batch_size: 3, max_coalescing_delay: 0.1 }, async (b) => void batches.push(b)), recorder().log);
    for (const n of [1, 2, 3, 4]) q.add(n);
    await until(() => batches.length === 2);
    expect(batches).toEqual([[1, 2, 3], [4]]);
    expect(q.stats).toMatchObject({ sent: 4, entries: 0, dropped: 0, failed: 0 });
  });

  it('coalesces entries that arrive while a batch waits, up to max_batch_size', async () => {
    const batches: string[][] = [];
    const q = new BatchQueue(spec<string>({ max_batch_size: 10, max_coalescing_delay: 0.2 }, async (b) => void batches.push(b)), recorder().log);
    q.add('a');
    await new Promise((r) => setImmediate(r));
    q.add('b');
    await until(() => batches.length === 1);
    expect(batches).toEqual([['a', 'b']]);
  });

  it('retries a failed batch with backoff until the handler accepts it, logging each failure', async () => {
    const { lines, log } = recorder();
    let failures = 3;
    const q = new BatchQueue(
      spec<string>({ max_coalescing_delay: 0, initial_retry_delay: 0.001, max_retry_delay: 0.01 }, async () => {
        if (failures-- > 0) throw new Error('down');
      }),
      log,
    );
    q.add('a');
    await until(() => q.stats.sent === 1);
    expect(lines.filter((l) => l === 'warn [test plugin p1] queue q: handler could not process entries: down')).toHaveLength(3);
    expect(q.stats).toMatchObject({ sent: 1, failed: 0 });
  });

  it('gives a batch up once max_retry_time has passed, with an error naming the lost entries', async () => {
    const { lines, log } = recorder();
    const q = new BatchQueue(
      spec<string>({ max_coalescing_delay: 0, initial_retry_delay: 0.01, max_retry_delay: 0.01, max_retry_time: 0.05 }, async () => {
        throw new Error('down');
      }),
      log,
    );
    q.add('a');
    await until(() => q.stats.failed === 1);
    expect(q.stats).toMatchObject({ sent: 0, failed: 1, entries: 0 });
    expect(lines).toContain('error [test plugin p1] queue q: could not send entries due to max_retry_time exceeded. 1 queue entries were lost');
  });

  it('drops the oldest waiting entries when max_entries is reached, says so once, and says when it resumes', async () => {
    const { lines, log } = recorder();
    const g = gate<string>();
    const q = new BatchQueue(spec<string>({ max_coalescing_delay: 0, max_entries: 2 }, g.handler), log);
    for (const e of ['a', 'b', 'c', 'd', 'e']) expect(q.add(e)).toBe(true);
    // 'a' is being handled; 'b' and 'c' made room for 'd' and 'e'
    expect(q.stats).toMatchObject({ entries: 3, dropped: 2 });
    expect(lines.filter((l) => l.includes('queue full, dropping old entries until processing is successful again'))).toHaveLength(1);
    expect(lines).toContain('warn [test plugin p1] queue q: queue at 80% capacity');
    g.release();
    await until(() => g.batches.length === 2);
    g.release();
    await until(() => g.batches.length === 3);
    g.release();
    await until(() => q.stats.sent === 3);
    expect(g.batches).toEqual([['a'], ['d'], ['e']]);
    expect(lines).toContain('info [test plugin p1] queue q: queue resumed processing');
  });

  it('keeps max_bytes: refuses an entry larger than it, drops the oldest to fit one that would exceed it', async () => {
    const { lines, log } = recorder();
    const g = gate<string>();
    const q = new BatchQueue(spec<string>({ max_coalescing_delay: 0, max_bytes: 6 }, g.handler), log);
    expect(q.add('first')).toBe(true);
    expect(q.add('toolong')).toBe(false);
    expect(lines).toContain("error [test plugin p1] queue q: string to be queued is longer (7 bytes) than the queue's max_bytes (6 bytes)");
    expect([q.add('abc'), q.add('de'), q.add('fgh')]).toEqual([true, true, true]);
    expect(lines).toContain('error [test plugin p1] queue q: byte capacity exceeded, 1 queue entries were dropped');
    g.release();
    await until(() => g.batches.length === 2);
    g.release();
    await until(() => g.batches.length === 3);
    g.release();
    expect(g.batches).toEqual([['first'], ['de'], ['fgh']]);
  });

  it("counts an entry that stands for several (a request's spans) as that many: batches, max_entries, counters", async () => {
    const { lines, log } = recorder();
    const g = gate<string>();
    const q = new BatchQueue(spec<string>({ max_batch_size: 5, max_coalescing_delay: 0, max_entries: 6 }, g.handler), log);
    // 'a' (3) is handled alone at once; 'b' (2), 'c' (3) wait: 5 of 6
    expect(q.add('a', undefined, 3)).toBe(true);
    expect([q.add('b', undefined, 2), q.add('c', undefined, 3)]).toEqual([true, true]);
    expect(q.stats).toMatchObject({ entries: 8, dropped: 0 });
    // 'd' (2) would make 7 of 6: 'b' is dropped whole, its 2 counted
    expect(q.add('d', undefined, 2)).toBe(true);
    expect(q.stats).toMatchObject({ entries: 8, dropped: 2 });
    expect(lines.filter((l) => l.includes('queue full, dropping old entries'))).toHaveLength(1);
    // 'e' (1) fits: 'c' (3) + 'd' (2) + 'e' (1) = 6
    expect(q.add('e', undefined, 1)).toBe(true);
    expect(q.stats).toMatchObject({ entries: 9, dropped: 2 });
    g.release();
    // a batch takes entries while their count stays within max_batch_size: 'c' and 'd' (5), then 'e'
    await until(() => g.batches.length === 2);
    expect(g.batches[1]).toEqual(['c', 'd']);
    g.release();
    await until(() => g.batches.length === 3);
    g.release();
    await until(() => q.stats.sent === 9);
    expect(g.batches).toEqual([['a'], ['c', 'd'], ['e']]);
    expect(q.stats).toMatchObject({ entries: 0, dropped: 2, sent: 9, failed: 0 });
  });

  it('sends an entry that stands for more than max_batch_size in a batch of its own', async () => {
    const g = gate<string>();
    const q = new BatchQueue(spec<string>({ max_batch_size: 2, max_coalescing_delay: 0 }, g.handler), recorder().log);
    q.add('first');
    q.add('big', undefined, 5);
    q.add('small');
    g.release();
    await until(() => g.batches.length === 2);
    g.release();
    await until(() => g.batches.length === 3);
    g.release();
    await until(() => q.stats.sent === 7);
    expect(g.batches).toEqual([['first'], ['big'], ['small']]);
  });

  it('with concurrency_limit -1 hands each entry to the handler at once, in parallel', async () => {
    const g = gate<number>();
    const q = new BatchQueue(spec<number>({ concurrency_limit: -1, max_batch_size: 10 }, g.handler), recorder().log);
    for (const n of [1, 2, 3]) q.add(n);
    await until(() => g.batches.length === 3);
    expect(g.batches).toEqual([[1], [2], [3]]);
    expect(q.stats.entries).toBe(3);
    g.release();
    await until(() => q.stats.sent === 3);
    expect(q.stats.entries).toBe(0);
  });

  it('on close hands what waits to the handler once, without coalescing or retries, and refuses new entries', async () => {
    const batches: string[][] = [];
    const q = new BatchQueue(spec<string>({ max_batch_size: 10, max_coalescing_delay: 3600 }, async (b) => void batches.push(b)), recorder().log);
    q.add('a');
    q.add('b');
    await q.close();
    expect(batches).toEqual([['a', 'b']]);
    expect(q.add('c')).toBe(false);
  });
});

describe('PluginQueues', () => {
  it('shares one queue between enqueues with the same name and settings, running the latest handler', async () => {
    const queues = new PluginQueues(recorder().log);
    const got: Array<[string, string[]]> = [];
    const handler = (tag: string) => async (b: string[]) => void got.push([tag, b]);
    const settings = { max_batch_size: 2, max_coalescing_delay: 5 };
    queues.enqueue(spec(settings, handler('first')), 'a');
    queues.enqueue({ ...spec(settings, handler('second')), owner: 'p2' }, 'b');
    await until(() => got.length === 1);
    expect(got).toEqual([['second', ['a', 'b']]]);
    await queues.close();
  });

  it('keeps queues apart when their names or settings differ, and counts each after it drained', async () => {
    const queues = new PluginQueues(recorder().log);
    const got: string[][] = [];
    const handler = async (b: string[]) => void got.push(b);
    queues.enqueue(spec({ max_batch_size: 2, max_coalescing_delay: 0.05 }, handler, 'one'), 'a');
    queues.enqueue(spec({ max_batch_size: 2, max_coalescing_delay: 0.05 }, handler, 'two'), 'b');
    queues.enqueue(spec({ max_batch_size: 3, max_coalescing_delay: 0.05 }, handler, 'one'), 'c');
    await until(() => got.length === 3);
    expect(got.sort()).toEqual([['a'], ['b'], ['c']]);
    await until(() => queues.stats().reduce((n, s) => n + s.sent, 0) === 3);
    expect(queues.stats().map((s) => [s.name, s.sent, s.entries]).sort()).toEqual([['one', 1, 0], ['one', 1, 0], ['two', 1, 0]]);
    queues.enqueue(spec({ max_batch_size: 2, max_coalescing_delay: 0 }, handler, 'two'), 'd');
    await until(() => got.length === 4);
    await queues.close();
    expect(queues.enqueue(spec({}, handler), 'late')).toBe(false);
  });
});

describe('queue settings', () => {
  it("has Kong's defaults, bounds and per-plugin defaults", () => {
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
    expect(queueField({ max_batch_size: 200 }).parse(undefined)).toMatchObject({ max_batch_size: 200, max_entries: 10000 });
    for (const bad of [{ max_batch_size: 0 }, { max_coalescing_delay: 3601 }, { max_entries: 1.5 }, { initial_retry_delay: 0 }, { concurrency_limit: 2 }, { other: 1 }]) {
      expect(queueSchema.safeParse(bad).success).toBe(false);
    }
    expect(queueSchema.parse({ max_retry_time: -1 }).max_retry_time).toBe(-1);
  });

  it('takes the deprecated queue_size and flush_timeout as Kong does', () => {
    const queue = queueSchema.parse({});
    expect(pluginQueueConfig(queue, { queue_size: 5, flush_timeout: 3 })).toMatchObject({ max_batch_size: 5, max_coalescing_delay: 3 });
    expect(pluginQueueConfig(queue, { queue_size: 1, flush_timeout: 2 })).toMatchObject({ max_batch_size: 1, max_coalescing_delay: 1 });
    expect(pluginQueueConfig(queue, { queue_size: null })).toEqual(queue);
  });
});
