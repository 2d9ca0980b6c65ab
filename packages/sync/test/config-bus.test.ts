import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { SnapshotAnnouncement } from '@gatehouse/core';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteRedisPrefix, freePort, requireRedis, SHARED_REDIS_URL, startRedisServer, uniqueRedisPrefix } from '@gatehouse/testkit';
import { Redis } from 'ioredis';
import { MemoryBus, RedisBus, signSnapshot, type ConfigBus, type DataPlaneReport } from '../src';
import { versionedSnapshot as makeSnapshot, waitFor } from '@gatehouse/testkit';

const SECRET = 'bus-test-secret-0123456789abcdef-0123';
const TTL = 600;

interface BusFixture {
  make(): ConfigBus;
  cleanup(): Promise<void>;
}

const redisPrefixes: string[] = [];
const fixtures: Array<[string, () => BusFixture]> = [
  [
    'MemoryBus',
    () => {
      // one in-process bus per test; every "connection" of the test is that bus
      let shared: MemoryBus | null = null;
      return {
        make: () => (shared ??= new MemoryBus({ dataPlaneTtlSeconds: TTL })),
        cleanup: async () => void (shared = null),
      };
    },
  ],
  [
    'RedisBus',
    () => {
      const prefix = uniqueRedisPrefix('bus');
      redisPrefixes.push(prefix);
      return {
        make: () => new RedisBus({ url: SHARED_REDIS_URL, prefix, dataPlaneTtlSeconds: TTL }),
        cleanup: async () => void (await deleteRedisPrefix(SHARED_REDIS_URL, prefix)),
      };
    },
  ],
];

function report(id: string, overrides: Partial<DataPlaneReport> = {}): DataPlaneReport {
  return {
    id,
    hostname: `host-${id}`,
    ip: '10.0.0.1',
    version: '0.1.0',
    config_version: 1,
    config_hash: 'a'.repeat(32),
    last_seen: Math.floor(Date.now() / 1000),
    sync_status: 'normal',
    ...overrides,
  };
}

beforeAll(async () => {
  await requireRedis(SHARED_REDIS_URL);
});

describe.each(fixtures)('%s: the ConfigBus contract', (_name, makeFixture) => {
  let fixture: BusFixture;
  const open: ConfigBus[] = [];
  const bus = () => {
    const b = fixture.make();
    open.push(b);
    return b;
  };

  beforeAll(() => {
    fixture = makeFixture();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((b) => b.close()));
    await fixture.cleanup();
  });

  it('has nothing before the first publish', async () => {
    const b = bus();
    expect(await b.fetchLatest()).toBeNull();
    expect(await b.latestAnnouncement()).toBeNull();
    expect(await b.listDataPlanes()).toEqual([]);
  });

  it('stores the latest snapshot and announces {version, hash} to every subscriber', async () => {
    const publisher = bus();
    const listener = bus();
    const heardA: SnapshotAnnouncement[] = [];
    const heardB: SnapshotAnnouncement[] = [];
    await listener.subscribe({ onAnnouncement: (a) => heardA.push(a), onReconnect: () => {} });
    await listener.subscribe({ onAnnouncement: (a) => heardB.push(a), onReconnect: () => {} });

    const signed = signSnapshot(makeSnapshot(3), SECRET);
    await publisher.publish(signed);
    await waitFor('both subscribers to hear version 3', () => heardA.length === 1 && heardB.length === 1);
    expect(heardA[0]).toEqual({ version: 3, hash: signed.hash });
    expect(heardB[0]).toEqual({ version: 3, hash: signed.hash });
    expect(await listener.fetchLatest()).toEqual(signed);
    expect(await listener.latestAnnouncement()).toEqual({ version: 3, hash: signed.hash });

    const next = signSnapshot(makeSnapshot(4), SECRET);
    await publisher.publish(next);
    await waitFor('version 4 to be heard', () => heardA.length === 2);
    expect(heardA.map((a) => a.version)).toEqual([3, 4]);
    expect((await listener.fetchLatest())?.version).toBe(4);
  });

  it('announces a version once when two control planes publish the same snapshot', async () => {
    const first = bus();
    const second = bus();
    const listener = bus();
    const heard: SnapshotAnnouncement[] = [];
    await listener.subscribe({ onAnnouncement: (a) => heard.push(a), onReconnect: () => {} });
    const signed = signSnapshot(makeSnapshot(7), SECRET);
    expect(await first.publish(signed)).toBe(true);
    expect(await second.publish(signed)).toBe(true);
    const next = signSnapshot(makeSnapshot(8), SECRET);
    expect(await second.publish(next)).toBe(true);
    await waitFor('version 8 to be heard', () => heard.some((a) => a.version === 8));
    expect(heard.map((a) => a.version)).toEqual([7, 8]);
  });

  it('never replaces a newer snapshot with an older one, and does not announce the older one', async () => {
    const b = bus();
    const heard: number[] = [];
    await b.subscribe({ onAnnouncement: (a) => heard.push(a.version), onReconnect: () => {} });
    const v5 = signSnapshot(makeSnapshot(5), SECRET);
    await b.publish(v5);
    await b.publish(signSnapshot(makeSnapshot(2), SECRET));
    expect(await b.fetchLatest()).toEqual(v5);

    const v5again = signSnapshot(makeSnapshot(5, 'same version, republished'), SECRET);
    await b.publish(v5again);
    expect(await b.fetchLatest()).toEqual(v5again);
    // a newer marker: once it is heard, an announcement of 2 would have been heard before it
    await b.publish(signSnapshot(makeSnapshot(6), SECRET));
    await waitFor('version 6 to be heard', () => heard.includes(6));
    expect(heard).toEqual([5, 5, 6]);
  });

  it('stops delivering to a closed subscription', async () => {
    const b = bus();
    const heard: number[] = [];
    const subscription = await b.subscribe({ onAnnouncement: (a) => heard.push(a.version), onReconnect: () => {} });
    await b.publish(signSnapshot(makeSnapshot(1), SECRET));
    await waitFor('version 1', () => heard.length === 1);
    await subscription.close();
    // a subscription still open is the marker: once it heard 2, the closed one would have too
    const witness: number[] = [];
    await b.subscribe({ onAnnouncement: (a) => witness.push(a.version), onReconnect: () => {} });
    await b.publish(signSnapshot(makeSnapshot(2), SECRET));
    await waitFor('the open subscription to hear version 2', () => witness.includes(2));
    expect(heard).toEqual([1]);
  });

  it('lists data planes with the seconds left before their row expires, newest first', async () => {
    const b = bus();
    const now = Math.floor(Date.now() / 1000);
    await b.reportDataPlane(report('dp-1', { last_seen: now - 100 }));
    await b.reportDataPlane(report('dp-2', { last_seen: now, config_version: 7 }));
    const listed = await b.listDataPlanes();
    expect(listed.map((d) => d.id)).toEqual(['dp-2', 'dp-1']);
    expect(listed[0]).toMatchObject({ hostname: 'host-dp-2', config_version: 7, sync_status: 'normal', config_hash: 'a'.repeat(32) });
    expect(listed[0].ttl).toBeGreaterThanOrEqual(TTL - 2);
    expect(listed[0].ttl).toBeLessThanOrEqual(TTL);
    expect(listed[1].ttl).toBeGreaterThanOrEqual(TTL - 102);
    expect(listed[1].ttl).toBeLessThanOrEqual(TTL - 99);

    // a later heartbeat replaces the row rather than adding one
    await b.reportDataPlane(report('dp-1', { last_seen: now + 1, config_version: 8 }));
    const again = await b.listDataPlanes();
    expect(again).toHaveLength(2);
    expect(again[0]).toMatchObject({ id: 'dp-1', config_version: 8 });
  });

  it('drops a data plane whose last report is older than the row lifetime', async () => {
    const b = bus();
    const now = Math.floor(Date.now() / 1000);
    await b.reportDataPlane(report('gone', { last_seen: now - TTL - 5 }));
    await b.reportDataPlane(report('alive', { last_seen: now }));
    expect((await b.listDataPlanes()).map((d) => d.id)).toEqual(['alive']);
  });

  it('rejects calls after close', async () => {
    const b = fixture.make();
    await b.close();
    await expect(b.publish(signSnapshot(makeSnapshot(1), SECRET))).rejects.toThrow(/closed/);
    await expect(b.fetchLatest()).rejects.toThrow(/closed/);
  });
});

describe('MemoryBus specifics', () => {
  it('delivers announcements after publish returns, never inside it', async () => {
    const b = new MemoryBus();
    const heard: number[] = [];
    await b.subscribe({ onAnnouncement: (a) => heard.push(a.version), onReconnect: () => {} });
    await b.publish(signSnapshot(makeSnapshot(1), SECRET));
    expect(heard).toEqual([]);
    await waitFor('delivery', () => heard.length === 1);
    await b.close();
  });

  it('hands out copies, so a caller cannot change the stored snapshot', async () => {
    const b = new MemoryBus();
    const signed = signSnapshot(makeSnapshot(1), SECRET);
    await b.publish(signed);
    signed.signature = 'changed';
    const fetched = await b.fetchLatest();
    expect(fetched?.signature).not.toBe('changed');
    fetched!.payload = 'changed';
    expect((await b.fetchLatest())?.payload).not.toBe('changed');
    await b.close();
  });

  it('expires rows by its clock', async () => {
    let nowMs = Date.now();
    const b = new MemoryBus({ dataPlaneTtlSeconds: 10, now: () => nowMs });
    await b.reportDataPlane(report('dp', { last_seen: Math.floor(nowMs / 1000) }));
    expect(await b.listDataPlanes()).toHaveLength(1);
    nowMs += 11000;
    expect(await b.listDataPlanes()).toEqual([]);
    await b.close();
  });

  it('reconnectSubscribers fires every onReconnect', async () => {
    const b = new MemoryBus();
    let reconnects = 0;
    await b.subscribe({ onAnnouncement: () => {}, onReconnect: () => reconnects++ });
    await b.subscribe({ onAnnouncement: () => {}, onReconnect: () => reconnects++ });
    b.reconnectSubscribers();
    await waitFor('two reconnects', () => reconnects === 2);
    await b.close();
  });
});

describe('RedisBus specifics', () => {
  const prefix = uniqueRedisPrefix('bus-keys');
  let raw: Redis;

  beforeAll(() => {
    raw = new Redis(SHARED_REDIS_URL);
  });
  afterAll(async () => {
    await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
    raw.disconnect();
  });

  it('keeps the snapshot as JSON under <prefix>snapshot and announces on <prefix>config', async () => {
    const b = new RedisBus({ url: SHARED_REDIS_URL, prefix });
    const signed = signSnapshot(makeSnapshot(11), SECRET);
    const sub = new Redis(SHARED_REDIS_URL);
    const messages: string[] = [];
    sub.on('message', (_channel: string, message: string) => messages.push(message));
    await sub.subscribe(`${prefix}config`);
    await b.publish(signed);
    expect(JSON.parse((await raw.get(`${prefix}snapshot`))!)).toEqual(signed);
    await waitFor('raw subscriber message', () => messages.length === 1);
    expect(JSON.parse(messages[0])).toEqual({ version: 11, hash: signed.hash });
    sub.disconnect();
    await b.close();
  });

  it('gives data plane rows a key expiry of the configured lifetime', async () => {
    const b = new RedisBus({ url: SHARED_REDIS_URL, prefix, dataPlaneTtlSeconds: 1234 });
    await b.reportDataPlane(report('dp-ttl'));
    const ttl = await raw.ttl(`${prefix}data_planes`);
    expect(ttl).toBeGreaterThan(1200);
    expect(ttl).toBeLessThanOrEqual(1234);
    await b.close();
  });

  it('uses the database number of the URL', async () => {
    const dbPrefix = uniqueRedisPrefix('bus-db');
    const b = new RedisBus({ url: `${SHARED_REDIS_URL.replace(/\/\d*$/, '')}/3`, prefix: dbPrefix });
    await b.publish(signSnapshot(makeSnapshot(1), SECRET));
    const db3 = new Redis(`${SHARED_REDIS_URL.replace(/\/\d*$/, '')}/3`);
    expect(await db3.exists(`${dbPrefix}snapshot`)).toBe(1);
    expect(await raw.exists(`${dbPrefix}snapshot`)).toBe(0);
    await db3.del(`${dbPrefix}snapshot`, `${dbPrefix}snapshot:head`);
    db3.disconnect();
    await b.close();
  });

  it('authenticates with the user and password of the URL', async () => {
    const server = await startRedisServer({ extraArgs: ['--requirepass', 's3cret'] });
    try {
      const good = new RedisBus({ url: `redis://default:s3cret@127.0.0.1:${server.port}`, prefix });
      await good.publish(signSnapshot(makeSnapshot(1), SECRET));
      expect((await good.fetchLatest())?.version).toBe(1);
      await good.close();

      const bad = new RedisBus({ url: `redis://default:wrong@127.0.0.1:${server.port}`, prefix });
      await expect(bad.fetchLatest()).rejects.toThrow();
      await bad.close();
    } finally {
      await server.stop();
    }
  });

  it('speaks TLS with a rediss:// URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { stdio: 'ignore' });
    const tlsPort = await freePort();
    const server = await startRedisServer({
      extraArgs: ['--port', '0', '--tls-port', String(tlsPort), '--tls-cert-file', cert, '--tls-key-file', key, '--tls-ca-cert-file', cert, '--tls-auth-clients', 'no'],
    });
    try {
      const b = new RedisBus({ url: `rediss://localhost:${tlsPort}`, prefix, redisOptions: { tls: { ca: readFileSync(cert) } } });
      const signed = signSnapshot(makeSnapshot(1), SECRET);
      await b.publish(signed);
      expect(await b.fetchLatest()).toEqual(signed);
      await b.close();

      // the same server refuses a client that does not trust its certificate
      const untrusting = new RedisBus({ url: `rediss://localhost:${tlsPort}`, prefix });
      await expect(untrusting.fetchLatest()).rejects.toThrow();
      await untrusting.close();
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
