// Keys and key sets written through the admin API reach every data plane, where jwe-decrypt opens tokens encrypted
// here with jose and forwards the plaintext; private key material never sits in Postgres in clear.
import { KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CompactEncrypt, exportJWK, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { controlPlaneMigrations, openDatabase } from '@gatehouse/control-plane';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

type Pair = Awaited<ReturnType<typeof generateKeyPair>>;

const RSA_KID = 'rsa-2048-jwk';
const EC_KID = 'ec-p256-pem';

/** A compact JWE of `plaintext` for `pair`'s public key, with the given protected header. */
async function encrypt(pair: Pair, header: { alg: string; enc: string; kid?: string }, plaintext: string): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader(header).encrypt(KeyObject.from(pair.publicKey));
}

/** The base64 body of a PEM document, without armour lines or line breaks. */
const pemBody = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

describe.each(TOPOLOGIES)('jwe-decrypt with keys from the admin API (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let rsa: Pair;
  let ec: Pair;
  let rsaJwkD: string;
  let ecPrivatePem: string;
  let ecPublicPem: string;
  let pluginId: string;

  beforeAll(async () => {
    rsa = await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048, extractable: true });
    ec = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
    const rsaJwk = { ...(await exportJWK(rsa.privateKey)), kid: RSA_KID };
    rsaJwkD = rsaJwk.d!;
    ecPrivatePem = await exportPKCS8(ec.privateKey);
    ecPublicPem = await exportSPKI(ec.publicKey);

    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    admin = adminClient(topology.adminUrl);

    const rsaSet = await admin.post('/key-sets', { name: 'rsa-set' });
    expect(rsaSet.status).toBe(201);
    const ecSet = await admin.post('/key-sets', { name: 'ec-set' });
    expect(ecSet.status).toBe(201);

    const rsaKey = await admin.post('/keys', { name: 'rsa-key', kid: RSA_KID, jwk: JSON.stringify(rsaJwk), 'set.name': 'rsa-set' });
    expect(rsaKey.status).toBe(201);
    expect(rsaKey.body.set).toEqual({ id: rsaSet.body.id });
    expect(rsaKey.body.pem).toBeNull();
    const ecKey = await admin.post('/keys', {
      name: 'ec-key',
      kid: EC_KID,
      'pem.private_key': ecPrivatePem,
      'pem.public_key': ecPublicPem,
      'set.name': 'ec-set',
    });
    expect(ecKey.status).toBe(201);
    expect(ecKey.body.set).toEqual({ id: ecSet.body.id });
    expect(ecKey.body.jwk).toBeNull();
    // the admin API serves back what was written, opened again
    expect(ecKey.body.pem.private_key).toBe(ecPrivatePem);

    expect((await admin.post('/services', { name: 'jwe-service', url: `${upstream.url}/` })).status).toBe(201);
    expect((await admin.post('/services/jwe-service/routes', { name: 'jwe-route', 'paths[]': '/jwe' })).status).toBe(201);
    const plugin = await admin.post('/routes/jwe-route/plugins', { name: 'jwe-decrypt', 'config.key_sets': ['rsa-set', 'ec-set'] });
    expect(plugin.status).toBe(201);
    expect(plugin.body.config).toEqual({ key_sets: ['rsa-set', 'ec-set'], lookup_header_name: 'Authorization', forward_header_name: 'Authorization', strict: true });
    pluginId = plugin.body.id;
    expect((await admin.post('/services/jwe-service/routes', { name: 'unknown-set-route', 'paths[]': '/unknown-set' })).status).toBe(201);
    expect((await admin.post('/routes/unknown-set-route/plugins', { name: 'jwe-decrypt', 'config.key_sets': 'no-such-set' })).status).toBe(201);
    await topology.converge();
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
  });

  const algorithms: Array<['RSA JWK' | 'EC PEM', string, string]> = [
    ['RSA JWK', 'RSA-OAEP-256', 'A256GCM'],
    ['RSA JWK', 'RSA-OAEP', 'A128CBC-HS256'],
    ['RSA JWK', 'RSA-OAEP-256', 'A256CBC-HS512'],
    ['EC PEM', 'ECDH-ES+A256KW', 'A128CBC-HS256'],
    ['EC PEM', 'ECDH-ES', 'A256GCM'],
    ['EC PEM', 'ECDH-ES+A128KW', 'A128GCM'],
  ];

  it.each(algorithms)('the %s key opens %s + %s: the upstream gets the plaintext, Bearer kept, on every data plane', async (key, alg, enc) => {
    const plaintext = `inner.${alg}.${enc}`;
    const [pair, kid] = key === 'RSA JWK' ? [rsa, RSA_KID] : [ec, EC_KID];
    const token = await encrypt(pair, { alg, enc, kid }, plaintext);
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/jwe/resource`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/resource');
      expect(res.body.headers.authorization).toBe(`Bearer ${plaintext}`);
    }
  });

  it('a token whose kid is in no configured set is 403 failed to decrypt token', async () => {
    const token = await encrypt(rsa, { alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: 'no-such-kid' }, 'secret');
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/jwe`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'failed to decrypt token' });
    }
    expect(upstream.received.some((r) => r.headers.authorization?.includes('secret'))).toBe(false);
  });

  it('a plugin naming a key set that does not exist refuses a valid token: 403 failed to decrypt token', async () => {
    const token = await encrypt(rsa, { alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: RSA_KID }, 'unknown-set');
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/unknown-set`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'failed to decrypt token' });
    }
  });

  it('a tampered token is 403 failed to decrypt token', async () => {
    const parts = (await encrypt(ec, { alg: 'ECDH-ES+A256KW', enc: 'A128CBC-HS256', kid: EC_KID }, 'tampered')).split('.');
    const ciphertext = Buffer.from(parts[3]!, 'base64url');
    ciphertext[0] ^= 0xff;
    parts[3] = ciphertext.toString('base64url');
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/jwe`, { headers: { authorization: `Bearer ${parts.join('.')}` } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'failed to decrypt token' });
    }
  });

  it('garbage is 400 failed to decode token', async () => {
    for (const dp of topology.dataPlanes) {
      for (const garbage of ['Bearer not-a-jwe', 'a.b.c']) {
        const res = await proxied(`${dp.proxyUrl}/jwe`, { headers: { authorization: garbage } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: 'failed to decode token' });
      }
    }
  });

  it('strict: no token is 403 could not find token; strict off (PATCHed): the request passes through untouched', async () => {
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/jwe`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'could not find token' });
    }
    const patched = await admin.patch(`/plugins/${pluginId}`, { 'config.strict': 'false' });
    expect(patched.status).toBe(200);
    expect(patched.body.config.strict).toBe(false);
    expect(patched.body.config.key_sets).toEqual(['rsa-set', 'ec-set']);
    await topology.converge();
    for (const dp of topology.dataPlanes) {
      const res = await proxied(`${dp.proxyUrl}/jwe/open`);
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/open');
      expect(res.body.headers.authorization).toBeUndefined();
    }
  });

  if (name === 'cluster') {
    it('keeps no private key material in clear in the control plane\'s Postgres keys table', async () => {
      expect(topology.databaseUrl).toEqual(expect.stringMatching(/^postgres/));
      const database = await openDatabase({ url: topology.databaseUrl!, poolSize: 1, migrations: controlPlaneMigrations() });
      try {
        const rows = await database.db.selectFrom('keys').selectAll().execute();
        expect(rows).toHaveLength(2);
        const stored = JSON.stringify(rows);
        const flat = stored.replace(/\\n|\s/g, '');
        // the test reads the right rows: the kids and the public PEM (not secret) are there
        expect(stored).toContain(RSA_KID);
        expect(stored).toContain(EC_KID);
        expect(flat).toContain(pemBody(ecPublicPem));
        // …and neither the JWK's private exponent nor the private PEM
        expect(stored).not.toContain(rsaJwkD);
        expect(flat).not.toContain(pemBody(ecPrivatePem));
        for (const line of ecPrivatePem.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'))) expect(stored).not.toContain(line);
        expect(stored).not.toContain('PRIVATE KEY');
      } finally {
        await database.close();
      }
    });
  }

  it('deleting a key set removes its keys: after converging its tokens are refused, the other set still works', async () => {
    const ecToken = await encrypt(ec, { alg: 'ECDH-ES+A256KW', enc: 'A128CBC-HS256', kid: EC_KID }, 'ec-inner');
    const rsaToken = await encrypt(rsa, { alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: RSA_KID }, 'rsa-inner');
    // before: both open
    for (const token of [ecToken, rsaToken]) expect((await proxied(`${topology.proxyUrl}/jwe`, { headers: { authorization: token } })).status).toBe(200);

    expect((await admin.delete('/key-sets/ec-set')).status).toBe(204);
    expect((await admin.get('/key-sets/ec-set')).status).toBe(404);
    expect((await admin.get('/keys/ec-key')).status).toBe(404);
    expect((await admin.get('/keys/rsa-key')).status).toBe(200);
    await topology.converge();
    for (const dp of topology.dataPlanes) {
      const refused = await proxied(`${dp.proxyUrl}/jwe`, { headers: { authorization: `Bearer ${ecToken}` } });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ message: 'failed to decrypt token' });
      const still = await proxied(`${dp.proxyUrl}/jwe`, { headers: { authorization: `Bearer ${rsaToken}` } });
      expect(still.status).toBe(200);
      expect(still.body.headers.authorization).toBe('Bearer rsa-inner');
    }

    expect((await admin.delete('/key-sets/rsa-set')).status).toBe(204);
    expect((await admin.get('/keys')).body.data).toEqual([]);
    await topology.converge();
    for (const dp of topology.dataPlanes) {
      const refused = await proxied(`${dp.proxyUrl}/jwe`, { headers: { authorization: `Bearer ${rsaToken}` } });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ message: 'failed to decrypt token' });
    }
  });
});
