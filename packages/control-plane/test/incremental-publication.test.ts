import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import request from 'supertest';
import { buildSnapshot, type Snapshot, type SnapshotDelta } from '@gatehouse/core';
import { applyDelta, compile, ConfigHolder, DataPlaneSync, type CompiledConfig } from '@gatehouse/data-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { MemoryBus, RedisBus, type ConfigBus } from '@gatehouse/sync';
import { createTestDatabase, deleteRedisPrefix, seededRandom, SHARED_REDIS_URL, uniqueRedisPrefix, type TestDatabase } from '@gatehouse/testkit';
import { createAdminApp, openDatabase, readSnapshotConfig, SnapshotPublisher, type AdminApp, type Database } from '../src';
import { bumpVersion } from '../src/store/config-store';

const SECRET = 'incremental-test-secret-0123456789abcdef';
const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

/** Maps as sorted entries, sets as sorted lists, functions left out: a compiled config as comparable data. */
function plain(value: unknown, seen = new Set<unknown>()): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (seen.has(value)) return '[seen]';
  seen.add(value);
  try {
    if (value instanceof Map) return [...value].map(([k, v]) => [k, plain(v, seen)]).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
    if (value instanceof Set) return [...value].map((v) => plain(v, seen)).sort();
    if (Array.isArray(value)) return value.map((v) => plain(v, seen));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = plain((value as Record<string, unknown>)[key], seen);
      if (v !== undefined) out[key] = v;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** What requests read: router order, routes with their chains, consumer directory, plugin indexes, balancers. */
function normalise(c: CompiledConfig): unknown {
  return plain({
    version: c.version,
    hash: c.hash,
    order: c.router.order(),
    routes: c.routes.map((r) => ({
      ...r,
      chain: r.chain.map((s) => ({ plugin: s.plugin.name, base: s.base, byConsumer: s.byConsumer, index: s.index })),
      logChain: r.logChain.map((s) => s.plugin.name),
    })),
    consumers: c.consumers,
    indexes: c.indexes,
    upstreams: c.upstreams,
    tls: { upstream: c.tls.upstream },
  });
}

/** Global configurations of the plugins whose indexes hold credentials (a second one of a name is refused). */
const CREDENTIAL_PLUGINS = [
  { name: 'key-auth', config: {} },
  { name: 'basic-auth', config: {} },
  { name: 'hmac-auth', config: {} },
  { name: 'jwt', config: {} },
  { name: 'acl', config: { allow: ['g0', 'g1'] } },
  { name: 'oauth2', config: { enable_client_credentials: true } },
];

/** consumer-scoped path → flat admin path of the credential kinds the random writes change */
const ADMIN_PATHS = { acls: 'acls', jwt: 'jwts', 'hmac-auth': 'hmac-auths', 'basic-auth': 'basic-auths', oauth2: 'oauth2' } as const;

/** A change of a credential: its identifying field (`rename`), or another field. */
const CHANGES: Record<(typeof ADMIN_PATHS)[keyof typeof ADMIN_PATHS], (n: number, rename: boolean) => Record<string, unknown>> = {
  acls: (n) => ({ group: `g${n % 4}` }),
  jwts: (n, rename) => (rename ? { key: `iss-${n % 300}` } : { secret: `secret-${n}` }),
  'hmac-auths': (n, rename) => (rename ? { username: `hmac-${n % 300}` } : { secret: `secret-${n}` }),
  'basic-auths': (n, rename) => (rename ? { username: `basic-${n % 300}` } : { password: `pw-${n}` }),
  oauth2: (n, rename) => (rename ? { client_id: `client-${n % 300}` } : { redirect_uris: [`https://app-${n}.test/cb`] }),
};

interface Follower {
  holder: ConfigHolder;
  sync: DataPlaneSync;
  deltas: number;
  fulls: number;
}

function follower(bus: ConfigBus): Follower {
  const holder = new ConfigHolder();
  const f: Follower = { holder, deltas: 0, fulls: 0 } as Follower;
  f.sync = new DataPlaneSync({
    bus,
    secret: SECRET,
    cacheFile: null,
    apply: (snapshot: Snapshot) => {
      holder.swap(compile(snapshot));
    },
    applyDelta: (delta: SnapshotDelta) => {
      holder.swap(applyDelta(holder.current, delta));
    },
    relabel: (version) => holder.swap({ ...holder.current, version }),
    currentVersion: () => (holder.loaded ? holder.current.version : null),
    currentHash: () => (holder.loaded ? holder.current.hash : null),
    identity: { id: `dp-${Math.random()}` },
    logger: silent,
    heartbeatIntervalMs: 0,
    refetchIntervalMs: 200,
    onApplied: () => f.fulls++,
    onDeltaApplied: () => f.deltas++,
  });
  return f;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type Bus = 'PGlite and the memory bus (embedded)' | 'Postgres and the Redis bus (cluster)';

/** the control plane's compiled copy of what it publishes, as `gatehouse` keeps it (snapshots compiled, deltas applied) */
class CompiledCopy {
  current: CompiledConfig | null = null;
  readonly loader = {
    load: (snapshot: Snapshot) => {
      this.current = compile(snapshot);
    },
    applyDelta: (delta: SnapshotDelta) => {
      this.current = applyDelta(this.current!, delta);
    },
  };
}

function publisherFor(app: AdminApp, bus: ConfigBus, copy: CompiledCopy, extra: Partial<ConstructorParameters<typeof SnapshotPublisher>[0]> = {}): SnapshotPublisher {
  return new SnapshotPublisher({
    store: app.locals.admin.store,
    bus,
    secret: SECRET,
    plugins: bundledPlugins,
    check: () => {},
    loader: copy.loader,
    log: silent,
    reconcileIntervalMs: 100,
    ...extra,
  });
}

describe.each<Bus>(['PGlite and the memory bus (embedded)', 'Postgres and the Redis bus (cluster)'])('incremental publication over %s', (kind) => {
  let testDb: TestDatabase;
  let database: Database;
  let app: AdminApp;
  let bus: ConfigBus;
  let publisher: SnapshotPublisher;
  const checked = new CompiledCopy();
  const prefix = uniqueRedisPrefix('incremental');
  const followers: Follower[] = [];

  let dataDir: string | null = null;

  beforeAll(async () => {
    // embedded: PGlite and the in-process bus, as `gatehouse start`; cluster: Postgres and Redis
    if (kind === 'PGlite and the memory bus (embedded)') {
      dataDir = mkdtempSync(join(tmpdir(), 'gh-incremental-'));
      database = await openDatabase({ dataDir });
    } else {
      testDb = await createTestDatabase({ prefix: 'gh_incremental' });
      database = await openDatabase({ url: testDb.url });
    }
    bus = kind === 'PGlite and the memory bus (embedded)' ? new MemoryBus() : new RedisBus({ url: SHARED_REDIS_URL, prefix });
    app = createAdminApp({ database, onCommitted: () => publisher.trigger() });
    publisher = publisherFor(app, bus, checked, { snapshotStoreIdleMs: 300 });
    await publisher.start();
    const first = follower(bus);
    followers.push(first);
    await first.sync.start();
  }, 60_000);

  afterAll(async () => {
    for (const f of followers) await f.sync.stop();
    await publisher?.stop();
    await bus?.close();
    await database?.close();
    await testDb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (kind === 'Postgres and the Redis bus (cluster)') await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
  });

  const store = () => app.locals.admin.store;

  /** the config compiled from a full snapshot of the database's current state */
  async function compiledFromDatabase(): Promise<CompiledConfig> {
    const read = await readSnapshotConfig(store(), { plugins: bundledPlugins });
    const snapshot = buildSnapshot(read.version, read.config, 0);
    if (read.epoch) snapshot.epoch = read.epoch;
    return compile(snapshot);
  }

  async function converged(f: Follower): Promise<void> {
    const version = await store().version();
    await until(() => f.holder.loaded && f.holder.current.version === version, `a data plane at version ${version}`);
  }

  async function expectSameAsFull(f: Follower): Promise<void> {
    await converged(f);
    const full = await compiledFromDatabase();
    expect(f.holder.current.hash).toBe(full.hash);
    const { createdAt: _a, ...mine } = normalise(f.holder.current) as Record<string, unknown>;
    const { createdAt: _b, ...theirs } = normalise(full) as Record<string, unknown>;
    expect(mine).toEqual(theirs);
  }

  /** One random admin write; refusals (a service with routes, a duplicate key) are part of the game. */
  async function randomWrite(next: () => number, ids: Record<string, string[]>): Promise<void> {
    const pick = (list: string[]) => (list.length ? list[Math.floor(next() * list.length)]! : undefined);
    const n = Math.floor(next() * 1_000_000);
    const forget = (list: string, id: string) => (ids[list] = ids[list]!.filter((x) => x !== id));
    const op = Math.floor(next() * 29) % 29;
    const consumer = pick(ids.consumers!);
    const service = pick(ids.services!);
    const route = pick(ids.routes!);
    const post = async (path: string, body: Record<string, unknown>, list?: string) => {
      const res = await request(app).post(path).send(body);
      if (res.status === 201 && list) ids[list]!.push(res.body.id);
    };
    /** creates a credential under a consumer and keeps it as `<admin path>/<id>` for later changes */
    const postCredential = async (owner: string, consumerPath: keyof typeof ADMIN_PATHS, body: Record<string, unknown>) => {
      const res = await request(app).post(`/consumers/${owner}/${consumerPath}`).send(body);
      if (res.status === 201) ids.credentials!.push(`${ADMIN_PATHS[consumerPath]}/${res.body.id}`);
    };
    switch (op) {
      case 0:
        return post('/services', { name: `s${n}`, url: `http://127.0.0.1:${9000 + (n % 50)}/p${n % 7}` }, 'services');
      case 1:
        if (service) await request(app).patch(`/services/${service}`).send({ read_timeout: 1000 + (n % 5000), enabled: n % 5 !== 0 });
        return;
      case 2:
        if (service && (await request(app).delete(`/services/${service}`)).status === 204) forget('services', service);
        return;
      case 3:
      case 4:
        if (service) await post(`/services/${service}/routes`, { paths: [`/r${n % 40}`], hosts: n % 3 === 0 ? [`h${n % 4}.test`] : undefined }, 'routes');
        return;
      case 5:
        if (route) await request(app).patch(`/routes/${route}`).send({ paths: [`/q${n % 40}`], strip_path: n % 2 === 0 });
        return;
      case 6:
        if (route && (await request(app).delete(`/routes/${route}`)).status === 204) forget('routes', route);
        return;
      case 7:
      case 8:
        return post('/consumers', { username: `u${n}`, custom_id: n % 2 ? `c${n}` : undefined }, 'consumers');
      case 9:
        if (consumer) await request(app).patch(`/consumers/${consumer}`).send({ username: `renamed${n}` });
        return;
      case 10:
        if (consumer && (await request(app).delete(`/consumers/${consumer}`)).status === 204) forget('consumers', consumer);
        return;
      case 11:
      case 12:
        if (consumer) await post(`/consumers/${consumer}/key-auth`, { key: `key-${n % 500}` }, 'keys');
        return;
      case 13:
      case 22:
      case 23: {
        const key = pick(ids.keys!);
        if (!key) return;
        const res = n % 2 ? await request(app).delete(`/key-auths/${key}`) : await request(app).patch(`/key-auths/${key}`).send({ key: `moved-${n}` });
        if (res.status === 204 || res.status === 404) forget('keys', key);
        return;
      }
      case 14:
        if (consumer) await postCredential(consumer, 'acls', { group: `g${n % 4}` });
        return;
      case 15:
        if (consumer) await postCredential(consumer, 'jwt', { key: `iss-${n % 300}`, secret: `secret-${n}` });
        return;
      case 16:
        if (consumer) await postCredential(consumer, 'hmac-auth', { username: `hmac-${n % 300}`, secret: `secret-${n}` });
        return;
      case 17: {
        const scopes = [{}, route ? { route: { id: route } } : {}, service ? { service: { id: service } } : {}];
        const scope = scopes[n % scopes.length]!;
        const name = ['key-auth', 'acl', 'jwt', 'hmac-auth'][n % 4]!;
        const config = name === 'acl' ? { allow: [`g${n % 4}`] } : {};
        return post('/plugins', { name, ...scope, config }, 'plugins');
      }
      case 18:
        // consumer-scoped plugins
        if (consumer) {
          const name = n % 2 ? 'rate-limiting' : 'request-termination';
          const config = name === 'rate-limiting' ? { minute: 10 + (n % 50), policy: 'local' } : { status_code: 403 };
          await post('/plugins', { name, consumer: { id: consumer }, ...(route && n % 3 === 0 ? { route: { id: route } } : {}), config }, 'plugins');
        }
        return;
      case 19: {
        const plugin = pick(ids.plugins!);
        if (!plugin) return;
        if (n % 3 === 0) {
          if ((await request(app).delete(`/plugins/${plugin}`)).status === 204) forget('plugins', plugin);
        } else await request(app).patch(`/plugins/${plugin}`).send({ enabled: n % 2 === 0 });
        return;
      }
      case 20:
        await post('/upstreams', { name: `up${n % 6}.internal` }, 'upstreams');
        return;
      case 21: {
        const upstream = pick(ids.upstreams!);
        if (!upstream) return;
        if (n % 4 === 0) {
          if ((await request(app).delete(`/upstreams/${upstream}`)).status === 204) forget('upstreams', upstream);
        } else await post(`/upstreams/${upstream}/targets`, { target: `127.0.0.1:${7000 + (n % 30)}`, weight: 10 + (n % 90) });
        return;
      }
      case 24:
        if (consumer) await postCredential(consumer, 'basic-auth', { username: `basic-${n % 300}`, password: `pw-${n}` });
        return;
      case 25:
        if (consumer) await postCredential(consumer, 'oauth2', { name: `app-${n}`, client_id: `client-${n % 300}`, client_secret: `secret-${n}`, redirect_uris: ['https://app.test/cb'] });
        return;
      case 26:
      case 27:
      case 28: {
        // a credential of the other kinds: its identifying field changes, another field changes, or it goes
        const credential = pick(ids.credentials!);
        if (!credential) return;
        const [kind, id] = credential.split('/') as [keyof typeof CHANGES, string];
        const res =
          n % 3 === 0 ? await request(app).delete(`/${kind}/${id}`) : await request(app).patch(`/${kind}/${id}`).send(CHANGES[kind](n, n % 3 === 1));
        if (res.status === 204 || res.status === 404) forget('credentials', credential);
        return;
      }
    }
  }

  it('random admin write sequences: the data plane after deltas equals the config compiled from the full snapshot', async () => {
    const [dp] = followers;
    for (const seed of [1, 2, 3]) {
      const next = seededRandom(seed * 7919);
      const ids: Record<string, string[]> = { services: [], routes: [], consumers: [], keys: [], credentials: [], plugins: [], upstreams: [] };
      // every credential plugin configured from the start, so each index follows every credential write
      for (const plugin of CREDENTIAL_PLUGINS) await request(app).post('/plugins').send(plugin);
      for (let round = 0; round < 6; round++) {
        const writes = 10 + Math.floor(next() * 20);
        for (let i = 0; i < writes; i++) await randomWrite(next, ids);
        await expectSameAsFull(dp!);
        // the control plane's own compiled copy follows too
        const full = await compiledFromDatabase();
        expect(checked.current!.hash).toBe(full.hash);
      }
    }
    // the writes travelled as deltas, not as full snapshots
    expect(dp!.deltas).toBeGreaterThan(100);
    expect(dp!.fulls).toBeLessThanOrEqual(2);
  }, 240_000);

  it('a data plane joining late loads the stored snapshot and the kept deltas, and then follows deltas', async () => {
    for (let i = 0; i < 5; i++) await request(app).post('/consumers').send({ username: `late-${i}` }).expect(201);
    const late = follower(bus);
    followers.push(late);
    await late.sync.start();
    await expectSameAsFull(late);
    const deltasBefore = late.deltas;
    const res = await request(app).post('/consumers').send({ username: 'after-join' }).expect(201);
    await request(app).post(`/consumers/${res.body.id}/key-auth`).send({ key: 'after-join-key' }).expect(201);
    await expectSameAsFull(late);
    expect(late.deltas).toBeGreaterThan(deltasBefore);
    expect((late.holder.current.indexes.get('key-auth') as { byKey: Map<string, unknown> } | undefined)?.byKey.has('after-join-key') ?? true).toBe(true);
  }, 60_000);

  it('two control plane replicas on one database publish each other\'s writes as one chain of deltas', async () => {
    const [dp] = followers;
    const otherChecked = new CompiledCopy();
    let other: SnapshotPublisher | null = null;
    const otherApp = createAdminApp({ database, onCommitted: () => other!.trigger() });
    other = publisherFor(otherApp, bus, otherChecked);
    try {
      await other.start();
      const deltasBefore = dp!.deltas;
      for (let i = 0; i < 20; i++) {
        const via = i % 2 === 0 ? app : otherApp;
        const res = await request(via).post('/consumers').send({ username: `replica-${i}` }).expect(201);
        await request(i % 3 === 0 ? app : otherApp).post(`/consumers/${res.body.id}/key-auth`).send({ key: `replica-key-${i}` }).expect(201);
      }
      await expectSameAsFull(dp!);
      expect(dp!.deltas).toBeGreaterThan(deltasBefore + 10);
      const full = await compiledFromDatabase();
      await until(() => otherChecked.current?.hash === full.hash && checked.current?.hash === full.hash, 'both replicas at the database\'s hash');
    } finally {
      await other.stop();
    }
  }, 60_000);

  it('a write bumps the version once, as it commits, however many rows it changed; a refused or empty write bumps nothing', async () => {
    const consumer = (username: string) => ({ id: randomUUID(), username, custom_id: null, tags: null, created_at: Math.floor(Date.now() / 1000), updated_at: Math.floor(Date.now() / 1000) });
    const consumers = store().repo('consumers');
    const before = await store().version();
    await store().write(async (trx) => {
      await consumers.insert(trx, consumer('commit-bump-a'));
      if (kind === 'Postgres and the Redis bus (cluster)') {
        // the version row is not locked while the write runs: another connection can lock it at once
        await store().db.transaction().execute(async (other) => {
          await sql`select version from config_state where id = 1 for update nowait`.execute(other);
        });
      }
      await consumers.insert(trx, consumer('commit-bump-b'));
    });
    expect(await store().version()).toBe(before + 1);
    // a transaction that bumped itself is not bumped again at commit
    await store().write(async (trx) => {
      await consumers.insert(trx, consumer('commit-bump-c'));
      expect(await bumpVersion(trx)).toBe(before + 2);
    });
    expect(await store().version()).toBe(before + 2);
    await expect(store().write(async (trx) => consumers.insert(trx, consumer('commit-bump-a')))).rejects.toMatchObject({ status: 409 });
    await store().write(async () => {});
    expect(await store().version()).toBe(before + 2);
    // each transaction's mark is gone once it committed (or rolled back)
    const { rows: marks } = await sql<{ n: string | number }>`select count(*) as n from config_bump_pending`.execute(store().db);
    expect(Number(marks[0]!.n)).toBe(0);
    await expectSameAsFull(followers[0]!);
  });

  it('a declarative replacement of everything is published as a full snapshot and data planes load it', async () => {
    const [dp] = followers;
    const fullsBefore = dp!.fulls;
    const consumers = Array.from({ length: 6000 }, (_, i) => ({ username: `bulk-${i}`, keyauth_credentials: [{ key: `bulk-key-${i}` }] }));
    const before = await store().version();
    await request(app).post('/config').send({ _format_version: '3.0', consumers }).expect(201);
    // thousands of rows in one transaction: one version
    expect(await store().version()).toBe(before + 1);
    await expectSameAsFull(dp!);
    expect(dp!.fulls).toBeGreaterThan(fullsBefore);
  }, 120_000);
});
