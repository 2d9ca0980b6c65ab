// The control plane survives Postgres going away under admin writes (issue 9, point 6): a Postgres cluster of the
// test's own (never the shared one) is stopped and started again by PID, 10 times, under 8 concurrent admin writers.
// The control plane never exits; requests during an outage answer 503 in Kong's error shape (never 500); every
// acknowledged write is there afterwards; and what was committed is published as soon as the database is back.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  deleteRedisPrefix,
  freePort,
  requireRedis,
  SHARED_REDIS_URL,
  startPostgresServer,
  uniqueRedisPrefix,
  type PostgresServerHandle,
  type SpawnedProcess,
} from '@gatehouse/testkit';
import { cleanUp, getJson, waitUntil } from './support/helpers';
import { spawnGatehouse } from './support/topology';

const WRITERS = 8;
const CYCLES = 10;

interface Answer {
  status: number;
  body: unknown;
}

/** 8 loops of POST /consumers, each answer recorded */
class Writers {
  readonly acknowledged: string[] = [];
  readonly unavailable: Answer[] = [];
  /** anything else: a 500, a refused connection (the control plane gone), a body not in Kong's shape */
  readonly unexpected: string[] = [];
  private running = true;
  private loops: Promise<void>[] = [];
  private seq = 0;

  constructor(private readonly adminUrl: string) {}

  start(): void {
    this.loops = Array.from({ length: WRITERS }, (_, w) => this.loop(w));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(writer: number): Promise<void> {
    while (this.running) {
      const username = `w${writer}-${this.seq++}`;
      try {
        const res = await fetch(`${this.adminUrl}/consumers`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ username }).toString(),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await res.text();
        const body = text ? JSON.parse(text) : null;
        if (res.status === 201) this.acknowledged.push(username);
        else if (res.status === 503 && typeof body?.message === 'string') this.unavailable.push({ status: res.status, body });
        else this.unexpected.push(`${username}: ${res.status} ${text}`);
      } catch (err) {
        this.unexpected.push(`${username}: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}

describe('control plane under Postgres outages (a Postgres cluster of its own, 8 writers, 10 stops)', () => {
  let postgres: PostgresServerHandle;
  let controlPlane: SpawnedProcess;
  let adminUrl: string;
  let dir: string;
  let redis: Redis;
  const prefix = uniqueRedisPrefix('e2e-pg-faults');

  beforeAll(async () => {
    await requireRedis(SHARED_REDIS_URL);
    postgres = await startPostgresServer();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-faults-'));
    const port = await freePort();
    adminUrl = `http://127.0.0.1:${port}`;
    controlPlane = await spawnGatehouse(
      'control-plane',
      {
        DATABASE_URL: postgres.adminUrl,
        REDIS_URL: SHARED_REDIS_URL,
        GATEHOUSE_REDIS_PREFIX: prefix,
        GATEHOUSE_CLUSTER_SECRET: randomBytes(24).toString('hex'),
        GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${port}`,
        GATEHOUSE_DATA_DIR: join(dir, 'cp'),
      },
      /admin API listening/,
    );
    redis = new Redis(SHARED_REDIS_URL);
  }, 90_000);

  afterAll(async () => {
    await cleanUp(
      () => controlPlane?.stop(),
      () => postgres?.destroy(),
      () => redis?.disconnect(),
      () => deleteRedisPrefix(SHARED_REDIS_URL, prefix),
      () => dir && rmSync(dir, { recursive: true, force: true }),
    );
  });

  const headVersion = async () => {
    const text = await redis.get(`${prefix}snapshot:head`);
    return text ? (JSON.parse(text) as { version: number }).version : null;
  };

  it('never exits, answers 503 while the database is down, keeps every acknowledged write and publishes it once back', async () => {
    const writers = new Writers(adminUrl);
    writers.start();
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const acked = writers.acknowledged.length;
        await waitUntil(`writes acknowledged before stop ${cycle + 1}`, () => writers.acknowledged.length >= acked + WRITERS, 30_000);

        const refused = writers.unavailable.length;
        await postgres.stop(cycle % 2 === 0 ? 'fast' : 'immediate');
        await waitUntil(`503 answers during outage ${cycle + 1}`, () => writers.unavailable.length >= refused + WRITERS, 30_000);
        expect(controlPlane.isRunning()).toBe(true);
        if (cycle === 0) {
          // /status tells the truth while the database is down
          const status = await getJson(`${adminUrl}/status`);
          expect(status.database).toEqual({ reachable: false });
          await waitUntil('the publisher to report the database unreachable', async () => (await getJson(`${adminUrl}/status`)).publisher.database_reachable === false);
          const events = (await getJson(`${adminUrl}/status`)).publisher.events as Array<{ kind: string }>;
          expect(events.map((e) => e.kind)).toContain('database_unreachable');
        }

        await postgres.start();
        const back = writers.acknowledged.length;
        await waitUntil(`writes acknowledged after restart ${cycle + 1}`, () => writers.acknowledged.length > back, 30_000);
        // what was committed, the writes whose publication the outage cut off included, reaches the bus
        await waitUntil(`publication of the latest version after restart ${cycle + 1}`, async () => {
          const { config_version: version } = await getJson(`${adminUrl}/status`);
          return (await headVersion()) === version;
        }, 15_000);
      }
    } finally {
      await writers.stop();
    }

    expect(writers.unexpected).toEqual([]);
    expect(controlPlane.isRunning()).toBe(true);
    expect(controlPlane.output()).not.toMatch(/Unhandled|uncaught/i);
    // the publisher names the cause (it used to say the snapshot "does not build or load")
    expect(controlPlane.output()).toMatch(/the database is unreachable/);
    expect(controlPlane.output()).not.toMatch(/does not build or load/);
    expect(writers.unavailable[0]!.body).toEqual({ message: 'Service unavailable: the database is unreachable' });

    const stored = new Set<string>();
    let next: string | null = `/consumers?size=1000`;
    while (next) {
      const page: { data: Array<{ username: string }>; next: string | null } = await getJson(`${adminUrl}${next}`);
      for (const consumer of page.data) stored.add(consumer.username);
      next = page.next;
    }
    const missing = writers.acknowledged.filter((username) => !stored.has(username));
    expect(missing).toEqual([]);
    expect(writers.acknowledged.length).toBeGreaterThanOrEqual(CYCLES * WRITERS);

    const status = await getJson(`${adminUrl}/status`);
    expect(status.database).toEqual({ reachable: true });
    await waitUntil('the final version published', async () => (await headVersion()) === status.config_version);
    const events = (await getJson(`${adminUrl}/status`)).publisher.events as Array<{ kind: string }>;
    expect(events.map((e) => e.kind)).toContain('database_reachable');
  }, 300_000);
});
