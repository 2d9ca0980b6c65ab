// A data plane on every core: the real `gatehouse data-plane` (fed over Redis like any data plane) with
// GATEHOUSE_WORKERS=1 and =2, key-auth, printed side by side with the ratio (target with the load generator and the
// upstream on cores of their own: 2 workers ≥ 1.8× one). Then key-auth + rate-limiting `local`, whose counters are the
// node's: with 2 workers every counted request is one batched IPC call to the primary, and the figure shows its cost
// against the same plugins with 1 worker (counters in the process) and against key-auth alone with 2 workers.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteRedisPrefix, makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, SHARED_REDIS_URL, uniqueRedisPrefix } from '@gatehouse/testkit';
import { RedisBus, signSnapshot } from '../../packages/sync/src';
import { here, load, printTable, startScript, type LoadResult } from './harness';

const CLI = here('../../packages/cli/src/main.ts');

interface Variant {
  name: string;
  workers: number;
  /** key-auth + rate-limiting `local` (limit high enough that every request is counted and let through) */
  rateLimited: boolean;
}

export async function measureWorkers(upstreamUrl: string, opts: { connections: number; seconds: number; apiKey: string }): Promise<LoadResult[]> {
  const secret = randomBytes(32).toString('hex');
  const prefix = uniqueRedisPrefix('bench-workers');
  const bus = new RedisBus({ url: SHARED_REDIS_URL, prefix });
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-workers-'));
  const service = makeService({ name: 'bench', url: upstreamUrl });
  const route = makeRoute({ paths: ['/'], service: { id: service.id } });
  const consumer = makeConsumer({ username: 'bench' });
  const credentials = { keyauth_credentials: [makeCredential(consumer, { key: opts.apiKey })] };
  const keyAuth = makePlugin({ name: 'key-auth', service: { id: service.id }, config: {} });
  const limit = makePlugin({ name: 'rate-limiting', service: { id: service.id }, config: { minute: 1e12, policy: 'local' } });
  const variants: Variant[] = [
    { name: 'data plane, key-auth, 1 worker', workers: 1, rateLimited: false },
    { name: 'data plane, key-auth, 2 workers', workers: 2, rateLimited: false },
    { name: 'key-auth + rate-limiting local, 1 worker', workers: 1, rateLimited: true },
    { name: 'key-auth + rate-limiting local, 2 workers', workers: 2, rateLimited: true },
  ];
  const rows: LoadResult[] = [];
  let version = 0;
  try {
    for (const v of variants) {
      const plugins = v.rateLimited ? [keyAuth, limit] : [keyAuth];
      // the data plane serves what the bus holds: each variant publishes its config as a newer version
      await bus.publish(signSnapshot(makeSnapshot({ services: [service], routes: [route], consumers: [consumer], plugins, credentials }, ++version), secret));
      const node = await startScript(
        CLI,
        {
          REDIS_URL: SHARED_REDIS_URL,
          GATEHOUSE_REDIS_PREFIX: prefix,
          GATEHOUSE_CLUSTER_SECRET: secret,
          GATEHOUSE_WORKERS: String(v.workers),
          GATEHOUSE_PROXY_LISTEN: '127.0.0.1:0',
          GATEHOUSE_STATUS_LISTEN: 'off',
          GATEHOUSE_PROXY_TLS_LISTEN: 'off',
          GATEHOUSE_ACCESS_LOG: 'off',
          GATEHOUSE_LOG_LEVEL: 'warn',
          GATEHOUSE_DATA_DIR: join(dir, `dp-${version}`),
        },
        /proxy listening on http:\/\/127\.0\.0\.1:(\d+)/,
        ['data-plane'],
      );
      try {
        rows.push(await load(v.name, `http://127.0.0.1:${node.port}/bench`, { connections: opts.connections, seconds: opts.seconds, headers: { apikey: opts.apiKey } }));
      } finally {
        await node.stop();
      }
    }
  } finally {
    await bus.close();
    await deleteRedisPrefix(SHARED_REDIS_URL, prefix).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export function printWorkers(rows: LoadResult[]): void {
  const find = (name: string) => rows.find((r) => r.name === name);
  const one = find('data plane, key-auth, 1 worker');
  const two = find('data plane, key-auth, 2 workers');
  if (!one || !two) return;
  console.log(`\nproxy workers (GATEHOUSE_WORKERS), the real data plane over Redis; ${availableParallelism()} cores shared by the workers, the upstream and the load generator`);
  printTable(rows, one);
  console.log(
    `2 workers vs 1: ${(two.rps / one.rps).toFixed(2)}× (target ≥ 1.8× where the load generator and the upstream have cores of their own; here they share the same ${availableParallelism()})`,
  );
  const limitedOne = find('key-auth + rate-limiting local, 1 worker');
  const limitedTwo = find('key-auth + rate-limiting local, 2 workers');
  if (limitedOne && limitedTwo) {
    console.log(
      `rate-limiting local with the node's counters over IPC (2 workers): ${(limitedTwo.rps / two.rps).toFixed(2)}× key-auth alone with 2 workers, ` +
        `${(limitedTwo.rps / limitedOne.rps).toFixed(2)}× the same plugins with 1 worker (counters in the process: ${(limitedOne.rps / one.rps).toFixed(2)}× key-auth alone)`,
    );
  }
}
