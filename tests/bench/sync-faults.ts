// Timings of the sync protocol under a Redis outage, moved here from the tests (which assert behaviour only):
// how soon the control plane hears that a publication failed, and how soon a data plane starts from its disk cache,
// each against the same operation with Redis up, measured in the same run (a redis-server of its own, stopped by PID).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSnapshot, emptyConfig } from '@gatehouse/core';
import { startRedisServer } from '@gatehouse/testkit';
import { DataPlaneSync } from '@gatehouse/data-plane';
import { RedisBus, signSnapshot } from '../../packages/sync/src';

const SECRET = 'bench-sync-faults-secret-of-32-bytes!!';
const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

export interface SyncFaultTimings {
  samples: number;
  /** median ms of a successful publish (Redis up) */
  publishUp: number;
  /** median ms until a publish rejects (Redis down) */
  publishDown: number;
  /** median ms of a data plane start from its cache, Redis up */
  startUp: number;
  /** median ms of a data plane start from its cache, Redis down */
  startDown: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

export async function measureSyncFaults(samples = 5): Promise<SyncFaultTimings> {
  const redis = await startRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-sync-'));
  const cacheFile = join(dir, 'snapshot.json');
  const bus = new RedisBus({ url: redis.url, prefix: 'bench:', connectTimeoutMs: 1000 });
  let version = 0;
  const next = () => signSnapshot(buildSnapshot(++version, emptyConfig()), SECRET);
  const startDataPlane = async () => {
    const dpBus = new RedisBus({ url: redis.url, prefix: 'bench:', connectTimeoutMs: 1000 });
    let serving: number | null = null;
    const sync = new DataPlaneSync({
      bus: dpBus,
      secret: SECRET,
      cacheFile,
      apply: (s) => void (serving = s.version),
      currentVersion: () => serving,
      identity: { id: 'bench-dp' },
      logger: silent,
      heartbeatIntervalMs: 0,
      refetchIntervalMs: 0,
      fetchRetryMs: 0,
    });
    const ms = await timed(() => sync.start());
    await sync.stop();
    await dpBus.close();
    return ms;
  };
  try {
    const publishUp: number[] = [];
    const startUp: number[] = [];
    for (let i = 0; i < samples; i++) {
      publishUp.push(await timed(() => bus.publish(next())));
      startUp.push(await startDataPlane());
    }
    await redis.stop();
    const publishDown: number[] = [];
    const startDown: number[] = [];
    for (let i = 0; i < samples; i++) {
      publishDown.push(await timed(() => bus.publish(next()).catch(() => undefined)));
      startDown.push(await startDataPlane());
    }
    return { samples, publishUp: median(publishUp), publishDown: median(publishDown), startUp: median(startUp), startDown: median(startDown) };
  } finally {
    await bus.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
