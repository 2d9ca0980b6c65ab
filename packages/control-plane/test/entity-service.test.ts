import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql } from 'kysely';
import { DbError } from '@gatehouse/core';
import { bundledPlugins } from '@gatehouse/plugins';
import { ConfigStore } from '../src/store';
import { EntityService, parseListQuery, registerDefaultKinds } from '../src/service';
import { BACKENDS } from './backends';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(60_000);

function errorOf(promise: Promise<unknown>): Promise<DbError> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (err) => err as DbError,
  );
}

describe.each(BACKENDS)('entity service on $name', (backend) => {
  let cleanup: () => Promise<void>;
  let store: ConfigStore;
  let service: EntityService;
  const committed: Array<number | null> = [];

  beforeAll(async () => {
    const opened = await backend.open();
    cleanup = opened.cleanup;
    store = new ConfigStore(opened.database, { onCommitted: (v) => void committed.push(v) });
    service = new EntityService(store);
    registerDefaultKinds(service, bundledPlugins);
  });
  afterAll(async () => {
    await cleanup?.();
  });

  const kind = (name: string) => service.kind(name);

  it('starts at config version 0 with every table migrated', async () => {
    expect(await store.version()).toBe(0);
    const names = ['consumers', 'services', 'routes', 'plugins', 'keyauth_credentials'];
    for (const name of names) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)}`.execute(store.db);
      expect(rows[0]!.n).toBe(0);
    }
  });

  it('creates, finds by id and endpoint key, and bumps the version once per write', async () => {
    const before = await store.version();
    const bob = await service.create(kind('consumers'), { body: { username: 'bob', tags: ['team-a'] } });
    expect(bob).toMatchObject({ username: 'bob', custom_id: null, tags: ['team-a'] });
    expect(typeof bob.id).toBe('string');
    expect(Number.isInteger(bob.created_at)).toBe(true);
    expect(String(bob.created_at)).toHaveLength(10);
    expect(await store.version()).toBe(before + 1);
    expect(committed[committed.length - 1]).toBe(before + 1);
    expect(await service.get(kind('consumers'), String(bob.id))).toEqual(bob);
    expect(await service.get(kind('consumers'), 'bob')).toEqual(bob);
  });

  it('maps a duplicate unique field to a 409 unique violation and leaves the version alone', async () => {
    const before = await store.version();
    const err = await errorOf(service.create(kind('consumers'), { body: { username: 'bob' } }));
    expect(err.status).toBe(409);
    expect(err.toBody()).toEqual({
      code: 5,
      name: 'unique constraint violation',
      message: `UNIQUE violation detected on '{username="bob"}'`,
      fields: { username: 'bob' },
    });
    expect(await store.version()).toBe(before);
  });

  it('refuses a reference to a missing entity with a foreign key violation', async () => {
    const missing = '7d4e2b1c-0000-4000-8000-000000000000';
    const err = await errorOf(service.create(kind('routes'), { body: { paths: ['/x'], service: { id: missing } } }));
    expect(err.status).toBe(400);
    expect(err.toBody()).toEqual({
      code: 4,
      name: 'foreign key violation',
      message: `the foreign key '{id="${missing}"}' does not reference an existing 'services' entity.`,
      fields: { service: { id: missing } },
    });
  });

  it('resolves a foreign reference given by endpoint key', async () => {
    const svc = await service.create(kind('services'), { body: { name: 'by-name', url: 'http://upstream:8080/p' } });
    expect(svc).toMatchObject({ protocol: 'http', host: 'upstream', port: 8080, path: '/p' });
    const route = await service.create(kind('routes'), { body: { paths: ['/n'], service: { name: 'by-name' } } });
    expect(route.service).toEqual({ id: svc.id });
    const err = await errorOf(service.create(kind('routes'), { body: { paths: ['/n'], service: { name: 'nope' } } }));
    expect(err.code).toBe(13);
  });

  it('refuses to delete a service still used by a route, and cascades plugins of deleted routes', async () => {
    const svc = await service.create(kind('services'), { body: { name: 'used', url: 'http://u' } });
    const route = await service.create(kind('routes'), { body: { paths: ['/used'], service: { id: svc.id } } });
    const plugin = await service.create(kind('plugins'), { body: { name: 'key-auth', route: { id: route.id } } });
    const err = await errorOf(service.remove(kind('services'), 'used'));
    expect(err.toBody()).toEqual({
      code: 4,
      name: 'foreign key violation',
      message: "an existing 'routes' entity references this 'services' entity",
      fields: { '@referenced_by': 'routes' },
    });
    expect(await service.remove(kind('routes'), String(route.id))).toBe(true);
    expect(await service.find(kind('plugins'), String(plugin.id))).toBeNull();
    expect(await service.remove(kind('services'), 'used')).toBe(true);
  });

  it('deletes credentials and consumer-scoped rows with their consumer', async () => {
    const alice = await service.create(kind('consumers'), { body: { username: 'alice' } });
    const scope = { field: 'consumer', id: String(alice.id) };
    const cred = await service.create(kind('keyauth_credentials'), { body: {} }, scope);
    expect(String(cred.key)).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(cred.consumer).toEqual({ id: alice.id });
    expect(await service.remove(kind('consumers'), 'alice')).toBe(true);
    expect(await service.find(kind('keyauth_credentials'), String(cred.id))).toBeNull();
  });

  it('fills plugin config defaults, deep-merges PATCH and keeps config.anonymous unchecked', async () => {
    const plugin = await service.create(kind('plugins'), { body: { name: 'key-auth', config: { hide_credentials: true } } });
    expect(plugin.config).toEqual({
      key_names: ['apikey'],
      hide_credentials: true,
      anonymous: null,
      key_in_header: true,
      key_in_query: true,
      key_in_body: false,
      run_on_preflight: true,
      realm: null,
    });
    const anonymous = '11111111-2222-4333-8444-555555555555';
    const patched = await service.patch(kind('plugins'), String(plugin.id), { body: { config: { anonymous } }, form: true });
    expect(patched.config).toMatchObject({ anonymous, hide_credentials: true });
    const cleared = await service.patch(kind('plugins'), String(plugin.id), { body: { config: { anonymous: '' } }, form: true });
    expect((cleared.config as Record<string, unknown>).anonymous).toBeNull();
    await service.remove(kind('plugins'), String(plugin.id));
  });

  it('upserts by endpoint key, replacing the whole entity', async () => {
    const first = await service.upsert(kind('consumers'), 'carol', { body: { custom_id: 'c-1' } });
    expect(first).toMatchObject({ username: 'carol', custom_id: 'c-1' });
    const replaced = await service.upsert(kind('consumers'), 'carol', { body: {} });
    expect(replaced).toMatchObject({ id: first.id, username: 'carol', custom_id: null, created_at: first.created_at });
    const byId = await service.upsert(kind('consumers'), String(first.id), { body: { username: 'carol2' } });
    expect(byId).toMatchObject({ id: first.id, username: 'carol2' });
  });

  it('pages by id with an opaque offset and filters by tags', async () => {
    for (let i = 0; i < 5; i++) {
      await service.create(kind('consumers'), { body: { username: `page-${i}`, tags: i % 2 ? ['odd', 'paged'] : ['even', 'paged'] } });
    }
    const seen: string[] = [];
    let offset: string | null = null;
    do {
      const page = await service.list(kind('consumers'), parseListQuery({ size: '2', tags: 'paged', ...(offset ? { offset } : {}) }));
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((c) => String(c.username)));
      offset = page.offset;
    } while (offset);
    expect(seen.sort()).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
    const both = await service.list(kind('consumers'), parseListQuery({ tags: 'odd,paged' }));
    expect(both.data.map((c) => c.username).sort()).toEqual(['page-1', 'page-3']);
    const either = await service.list(kind('consumers'), parseListQuery({ tags: 'odd/even' }));
    expect(either.data).toHaveLength(5);
  });

  it('rolls back a failing write completely and does not bump the version', async () => {
    const before = await store.version();
    const count = async () => (await service.list(kind('consumers'), parseListQuery({ size: '1000' }))).data.length;
    const consumersBefore = await count();
    const err = await errorOf(
      store.write(async (trx) => {
        await service.createIn(trx, kind('consumers'), { body: { username: 'ghost' } });
        await service.createIn(trx, kind('consumers'), { body: { username: 'ghost' } });
      }),
    );
    expect(err.code).toBe(5);
    expect(await count()).toBe(consumersBefore);
    expect(await service.find(kind('consumers'), 'ghost')).toBeNull();
    expect(await store.version()).toBe(before);
  });

  it('reads a consistent state together with its version', async () => {
    const { version, result } = await store.readConsistent((trx) => store.repo('consumers').all(trx));
    expect(version).toBe(await store.version());
    expect(result.length).toBeGreaterThan(0);
    expect(result.map((c) => c.id)).toEqual([...result.map((c) => c.id)].sort());
  });

  it('keeps concurrent writes apart: each gets its own version', async () => {
    const before = await store.version();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => service.create(kind('consumers'), { body: { username: i === 7 ? 'page-0' : `par-${i}` } })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(7);
    expect(await store.version()).toBe(before + 7);
  });
});
