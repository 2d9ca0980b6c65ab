import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CompactEncrypt, exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { KeyObject } from 'node:crypto';
import request from 'supertest';
import { createAdminApp, keyMigrations, keyringFromSecret, keysExtension, loadKeysForSnapshot, openDatabase, type Database } from '@gatehouse/control-plane';
import { compile, ConfigHolder, createDataPlaneServer, type DataPlaneServer } from '@gatehouse/data-plane';
import { makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';

/**
 * jwe-decrypt from the admin API to the upstream: keys written through the admin API (sealed at rest), the snapshot's
 * key sections built from the database, the data plane compiling them and decrypting tokens encrypted here.
 */

type Pair = Awaited<ReturnType<typeof generateKeyPair>>;
const pairs: Record<string, Pair> = {};
let database: Database;
let echo: EchoUpstream;
let dp: DataPlaneServer;

const quiet = { error: () => undefined, warn: () => undefined };

beforeAll(async () => {
  pairs.rsa = await generateKeyPair('RSA-OAEP', { modulusLength: 2048, extractable: true });
  pairs.p256 = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  pairs.p384 = await generateKeyPair('ECDH-ES', { crv: 'P-384', extractable: true });
  pairs.other = await generateKeyPair('RSA-OAEP', { modulusLength: 2048, extractable: true });

  database = await openDatabase({ migrations: keyMigrations() });
  const keyring = keyringFromSecret('jwe-proxy-test');
  const admin = request(createAdminApp({ database, extensions: [keysExtension(keyring)], log: () => {} }));
  const ok = (res: request.Response) => {
    expect(res.status).toBe(201);
    return res.body;
  };
  ok(await admin.post('/key-sets').send({ name: 'primary' }));
  ok(await admin.post('/key-sets').send({ name: 'secondary' }));
  ok(await admin.post('/key-sets/primary/keys').send({ kid: 'rsa', jwk: JSON.stringify({ ...(await exportJWK(pairs.rsa.privateKey)), kid: 'rsa' }) }));
  ok(await admin.post('/key-sets/primary/keys').type('form').send({ kid: 'p256', 'pem.private_key': await exportPKCS8(pairs.p256.privateKey) }));
  ok(await admin.post('/key-sets/secondary/keys').send({ kid: 'p384', jwk: JSON.stringify({ ...(await exportJWK(pairs.p384.privateKey)), kid: 'p384' }) }));

  echo = await startEchoUpstream();
  const service = makeService({ name: 'echo', url: echo.url });
  const route = (name: string, path: string) => makeRoute({ name, paths: [path], service: { id: service.id } });
  const routes = [route('strict', '/strict'), route('lenient', '/lenient'), route('missing-set', '/missing-set'), route('custom', '/custom')];
  const plugin = (routeId: string, config: Record<string, unknown>) => makePlugin({ name: 'jwe-decrypt', route: { id: routeId }, config });
  const plugins = [
    plugin(routes[0]!.id, { key_sets: ['primary', 'secondary'] }),
    plugin(routes[1]!.id, { key_sets: ['primary', 'secondary'], strict: false }),
    plugin(routes[2]!.id, { key_sets: ['no-such-set', 'primary'] }),
    plugin(routes[3]!.id, { key_sets: ['secondary'], lookup_header_name: 'x-jwe', forward_header_name: 'x-claims' }),
  ];
  const keySections = await loadKeysForSnapshot(database.db, keyring);
  const snapshot = makeSnapshot({ services: [service], routes, plugins, ...keySections });
  dp = await createDataPlaneServer({ holder: new ConfigHolder(compile(snapshot)), listen: { host: '127.0.0.1', port: 0 }, log: quiet });
}, 60_000);

afterAll(async () => {
  await dp?.close();
  await echo?.close();
  await database?.close();
});

function encrypt(pair: Pair, header: Record<string, unknown>, plaintext: string): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader(header as any).encrypt(KeyObject.from(pair.publicKey as any));
}

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${dp.port}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) };
}

describe('jwe-decrypt through the data plane', () => {
  const algorithms: Array<[string, string, string, string]> = [
    ['rsa', 'rsa', 'RSA-OAEP', 'A256GCM'],
    ['rsa', 'rsa', 'RSA-OAEP-256', 'A128GCM'],
    ['rsa', 'rsa', 'RSA-OAEP', 'A128CBC-HS256'],
    ['rsa', 'rsa', 'RSA-OAEP-256', 'A256CBC-HS512'],
    ['p256', 'p256', 'ECDH-ES', 'A256GCM'],
    ['p256', 'p256', 'ECDH-ES+A128KW', 'A128CBC-HS256'],
    ['p256', 'p256', 'ECDH-ES+A256KW', 'A256CBC-HS512'],
    ['p384', 'p384', 'ECDH-ES', 'A128GCM'],
    ['p384', 'p384', 'ECDH-ES+A128KW', 'A256GCM'],
    ['p384', 'p384', 'ECDH-ES+A256KW', 'A128CBC-HS256'],
  ];
  it.each(algorithms)('%s key (kid %s): %s + %s reaches the upstream as plaintext', async (pair, kid, alg, enc) => {
    const plaintext = `inner.${alg}.${enc}`;
    const res = await get('/strict', { authorization: await encrypt(pairs[pair]!, { alg, enc, kid }, plaintext) });
    expect(res.status).toBe(200);
    expect(res.json.headers.authorization).toBe(plaintext);
  });

  it('keeps the Bearer prefix', async () => {
    const token = await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'rsa' }, 'inner');
    const res = await get('/strict', { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(res.json.headers.authorization).toBe('Bearer inner');
  });

  it('uses lookup_header_name and forward_header_name', async () => {
    const token = await encrypt(pairs.p384!, { alg: 'ECDH-ES', enc: 'A256GCM', kid: 'p384' }, '{"sub":"alice"}');
    const res = await get('/custom', { 'x-jwe': token });
    expect(res.status).toBe(200);
    expect(res.json.headers['x-claims']).toBe('{"sub":"alice"}');
  });

  it('a wrong kid is 403 failed to decrypt token', async () => {
    const res = await get('/strict', { authorization: await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'unknown' }, 'x') });
    expect(res).toEqual({ status: 403, json: { message: 'failed to decrypt token' } });
  });

  it('a token for the right kid but another key is 403', async () => {
    const res = await get('/strict', { authorization: await encrypt(pairs.other!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'rsa' }, 'x') });
    expect(res).toEqual({ status: 403, json: { message: 'failed to decrypt token' } });
  });

  it('a tampered token is 403', async () => {
    const parts = (await encrypt(pairs.p256!, { alg: 'ECDH-ES', enc: 'A256GCM', kid: 'p256' }, 'payload')).split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] ^= 0x55;
    parts[3] = body.toString('base64url');
    expect(await get('/strict', { authorization: parts.join('.') })).toEqual({ status: 403, json: { message: 'failed to decrypt token' } });
  });

  it('an unknown key set is 403', async () => {
    const res = await get('/missing-set', { authorization: await encrypt(pairs.rsa!, { alg: 'RSA-OAEP', enc: 'A256GCM', kid: 'rsa' }, 'x') });
    expect(res).toEqual({ status: 403, json: { message: 'failed to decrypt token' } });
  });

  it('a token that is not a compact JWE is 400 failed to decode token', async () => {
    expect(await get('/strict', { authorization: 'Bearer a.b.c' })).toEqual({ status: 400, json: { message: 'failed to decode token' } });
  });

  it('missing header with strict on: 403 could not find token', async () => {
    expect(await get('/strict')).toEqual({ status: 403, json: { message: 'could not find token' } });
  });

  it('missing header with strict off: proxied unchanged', async () => {
    const res = await get('/lenient');
    expect(res.status).toBe(200);
    // strip_path (the route default) leaves the upstream path at /
    expect(res.json.path).toBe('/');
    expect(res.json.headers.authorization).toBeUndefined();
  });
});
