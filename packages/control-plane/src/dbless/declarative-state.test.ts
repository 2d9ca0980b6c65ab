import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { bundledPlugins } from '@gatehouse/plugins';
import { offlineDocumentKinds } from '../declarative/offline-kinds';
import { DeclarativeError } from '../declarative/errors';
import { upgradePath } from '../declarative/upgrade';
import { loadDeclarative, type DeclarativeState } from './declarative-state';
import { stateSnapshotConfig } from './state-snapshot';
import { presentEntity } from './read-routes';

const kinds = offlineDocumentKinds(bundledPlugins);
const CONSUMER = '5e2ce1a9-3b4e-4c77-9d1a-0123456789ab';
// SHA-1 of 'kong-password' followed by CONSUMER, Kong's stored basic-auth form
const DIGEST = '28c918af03da3c533ca69be7745206fc905a024d';

const one = (state: DeclarativeState, kind: string) => state.entities.get(kind)![0]!;

async function refusal(doc: Record<string, unknown>): Promise<DeclarativeError> {
  try {
    await loadDeclarative(doc, kinds);
  } catch (err) {
    if (err instanceof DeclarativeError) return err;
    throw err;
  }
  throw new Error('the document loaded');
}

describe('DB-less: a document loaded into memory', () => {
  it('builds every entity as an admin write would (defaults, hashed passwords) and a snapshot of them', async () => {
    const state = await loadDeclarative(
      {
        _format_version: '3.0',
        services: [{ name: 's', url: 'http://upstream:8080/base', routes: [{ name: 'r', paths: ['/r'], plugins: [{ name: 'key-auth' }] }] }],
        consumers: [{ username: 'u', keyauth_credentials: [{ key: 'k' }], basicauth_credentials: [{ username: 'u', password: 'pw' }] }],
      },
      kinds,
    );
    expect(one(state, 'services')).toMatchObject({ name: 's', host: 'upstream', port: 8080, path: '/base', retries: 5 });
    expect(String(one(state, 'basicauth_credentials').password)).toMatch(/^\$2b\$/);
    const config = stateSnapshotConfig(state, bundledPlugins);
    expect(config.routes).toHaveLength(1);
    expect(config.plugins[0]!.route).toEqual({ id: one(state, 'routes').id });
    expect(config.credentials.keyauth_credentials).toHaveLength(1);
  });

  it('_transform: false keeps a basic-auth password as given (Kong stored digest)', async () => {
    const state = await loadDeclarative(
      { _format_version: '3.0', _transform: false, consumers: [{ id: CONSUMER, username: 'u', basicauth_credentials: [{ username: 'u', password: DIGEST }] }] },
      kinds,
    );
    expect(one(state, 'basicauth_credentials').password).toBe(DIGEST);
  });

  it("accepts ids that are hex UUIDs but not RFC 4122 ones (Kong's uuid typedef)", async () => {
    const id = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
    const state = await loadDeclarative({ _format_version: '3.0', services: [{ id, name: 's', host: 'h', routes: [{ paths: ['/p'] }] }] }, kinds);
    expect(one(state, 'services').id).toBe(id);
    expect(one(state, 'routes').service).toEqual({ id });
  });

  it('a client_certificate given as a plain id string is a reference to it', async () => {
    const cert = '11111111-2222-3333-4444-555555555555';
    const state = await loadDeclarative({ _format_version: '3.0', services: [{ name: 's', host: 'h', protocol: 'https', client_certificate: cert }] }, kinds);
    expect(one(state, 'services').client_certificate).toEqual({ id: cert });
  });

  it('_comment and _ignore keys on an entity are ignored', async () => {
    const state = await loadDeclarative(
      { _format_version: '3.0', _comment: 'top', services: [{ name: 's', host: 'h', _comment: 'a note', _ignore: [{ anything: 1 }] }] },
      kinds,
    );
    expect(one(state, 'services')).not.toHaveProperty('_comment');
    expect(one(state, 'services')).not.toHaveProperty('_ignore');
  });

  it("rate-limiting's deprecated redis_* fields load onto config.redis", async () => {
    const state = await loadDeclarative({ _format_version: '3.0', plugins: [{ name: 'rate-limiting', config: { minute: 5, policy: 'redis', redis_host: 'cache', redis_port: 6380 } }] }, kinds);
    expect(one(state, 'plugins').config).toMatchObject({ redis: { host: 'cache', port: 6380 } });
    expect(one(state, 'plugins').config).not.toHaveProperty('redis_host');
  });

  it("format 1.1 documents: regex paths get Kong 3.0's ~ prefix, plain ones stay prefixes", async () => {
    const state = await loadDeclarative(
      {
        _format_version: '1.1',
        services: [{ name: 's', host: 'h', routes: [{ name: 'nested', paths: ['/users/\\d+', '/plain'] }] }],
        routes: [{ name: 'top', paths: ['/v1/(?<id>[a-z]+)'], service: 's' }],
      },
      kinds,
    );
    const paths = Object.fromEntries(state.entities.get('routes')!.map((r) => [r.name, r.paths]));
    expect(paths).toEqual({ nested: ['~/users/\\d+', '/plain'], top: ['~/v1/(?<id>[a-z]+)'] });
  });

  it('key sets and keys stay in clear in memory: the admin API and the snapshot get the material as given', async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = JSON.stringify({ ...pair.privateKey.export({ format: 'jwk' }), kid: 'k1' });
    const state = await loadDeclarative({ _format_version: '3.0', key_sets: [{ name: 'set', keys: [{ name: 'k', kid: 'k1', jwk }] }] }, kinds);
    const key = one(state, 'keys');
    expect(presentEntity(kinds.find((k) => k.def.name === 'keys')!, key).jwk).toBe(jwk);
    const config = stateSnapshotConfig(state, bundledPlugins);
    expect(config.keys).toEqual([expect.objectContaining({ kid: 'k1', jwk, set: { id: one(state, 'key_sets').id } })]);
  });

  it('a document that does not load is refused entity by entity, in Kong shape', async () => {
    const err = await refusal({ _format_version: '3.0', services: [{ name: 'bad', host: 'h', port: -1, tags: ['t'] }] });
    expect(err.status).toBe(400);
    expect(err.flattened).toEqual([expect.objectContaining({ entity_type: 'service', entity_name: 'bad', entity_tags: ['t'] })]);
  });
});

describe("format 1.1 → 3.0 path upgrade (Kong's migrate_path_280_300)", () => {
  it.each([
    ['/plain/path', '/plain/path'],
    ['/a%7Eb', '/a~b'],
    ['/a%2fb', '/a%2Fb'],
    ['/status/\\d+', '~/status/\\d+'],
    ['/v1/(foo|bar)', '~/v1/(foo|bar)'],
    ['/x%2E(y)', '~/x\\.(y)'],
  ])('%s → %s', (given, upgraded) => {
    expect(upgradePath(given)).toBe(upgraded);
  });
});
