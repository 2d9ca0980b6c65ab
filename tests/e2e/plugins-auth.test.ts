// jwt, hmac-auth, ldap-auth (against a real slapd) and acl through the real admin API and proxy, in both topologies,
// and the interface document's multi-plugin rules with three plugins at once (jwt + key-auth + basic-auth).
import { createHmac, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { rawRequest, startEchoUpstream, startLdapServer, type EchoUpstream, type LdapServerHandle } from '@gatehouse/testkit';
import { basicAuth } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const HS_SECRET = 'hs256-secret-for-the-jwt-e2e-test';
const HMAC_SECRET = 'hmac-secret-for-the-e2e-test';
const LDAP_USERS = [
  { name: 'einstein', password: 'relativity' },
  { name: 'curie', password: 'radium' },
];

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** An HS256 JWT built by hand: base64url(header).base64url(claims).base64url(HMAC-SHA256). */
function hs256(claims: Record<string, unknown>, secret: string | Buffer): string {
  const signed = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${signed}.${b64url(createHmac('sha256', secret).update(signed).digest())}`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** hmac-auth headers for `GET <path>`, signing `date` and the request line (Kong's documented example). */
function hmacSigned(path: string, username: string, secret: string, opts: { method?: string; date?: string } = {}): Record<string, string> {
  const date = opts.date ?? new Date().toUTCString();
  const signingString = `date: ${date}\n${opts.method ?? 'GET'} ${path} HTTP/1.1`;
  const signature = createHmac('sha256', secret).update(signingString).digest('base64');
  return { date, authorization: `hmac username="${username}", algorithm="hmac-sha256", headers="date request-line", signature="${signature}"` };
}

const ldapHeader = (user: string, password: string) => `ldap ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** What must not depend on the data plane that answered: the status, and the identity upstream or the refusal body. */
function outcomeOf(res: Awaited<ReturnType<typeof proxied>>): unknown {
  const echoed = res.body?.headers;
  if (res.status !== 200 || typeof echoed !== 'object') return { status: res.status, body: res.body };
  const identity = ['x-consumer-id', 'x-consumer-username', 'x-credential-identifier', 'x-anonymous-consumer'];
  const groups = echoed['x-consumer-groups']?.split(', ').sort() ?? null;
  return { status: res.status, path: res.body.path, identity: identity.map((h) => echoed[h] ?? null), groups };
}

/** An EdDSA JWT (RFC 8037) signed with node:crypto, which has Ed448 (jose does not). */
function eddsa(claims: Record<string, unknown>, privateKey: KeyObject): string {
  const signed = `${b64url(JSON.stringify({ alg: 'EdDSA', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${signed}.${b64url(cryptoSign(null, Buffer.from(signed), privateKey))}`;
}

const ED25519 = generateKeyPairSync('ed25519');
const ED448 = generateKeyPairSync('ed448');
const spkiPem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();

let ldap: LdapServerHandle;
let rsaPrivate: KeyObject;
let rsaPublicPem: string;

beforeAll(async () => {
  ldap = await startLdapServer({ users: LDAP_USERS });
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  rsaPrivate = pair.privateKey;
  rsaPublicPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
}, 60_000);

afterAll(async () => {
  await ldap?.stop();
});

describe.each(TOPOLOGIES)('authentication plugins jwt, hmac-auth, ldap-auth, acl (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  const ids: Record<string, string> = {};
  let generatedJwt: { key: string; secret: string };

  /** the same request through every data plane; every one must answer alike, the first answer is returned */
  const everywhere = async (path: string, init: RequestInit = {}) => {
    const answers = await Promise.all(topology.dataPlanes.map((dp) => proxied(`${dp.proxyUrl}${path}`, init)));
    for (const answer of answers.slice(1)) expect(outcomeOf(answer)).toEqual(outcomeOf(answers[0]!));
    return answers[0]!;
  };

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** a service and a route on `/<label>` with the given plugins, in order */
  async function protectedRoute(label: string, plugins: Array<[string, Record<string, string | string[]>]>) {
    await created('/services/', { name: label, url: `${upstream.url}/` });
    await created(`/services/${label}/routes`, { name: label, 'paths[]': `/${label}` });
    for (const [plugin, config] of plugins) await created(`/services/${label}/plugins/`, { name: plugin, ...config });
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    admin = adminClient(topology.adminUrl);

    const consumers = ['jwt-user', 'rsa-user', 'ed25519-user', 'ed448-user', 'generated-user', 'hmac-user', 'gold-member', 'silver-member', 'guest', 'alice', 'bob', 'anon-jwt', 'anon-key', 'anon-basic'];
    for (const username of consumers) ids[username] = (await created('/consumers/', { username })).id;

    // jwt: an HS256 credential with a given secret, an RS256 one with a public key, one with everything generated
    const hs = await created('/consumers/jwt-user/jwt', { key: 'hs-key', secret: HS_SECRET });
    expect(hs).toMatchObject({ key: 'hs-key', secret: HS_SECRET, algorithm: 'HS256', consumer: { id: ids['jwt-user'] } });
    const rs = await created('/consumers/rsa-user/jwt', { key: 'rsa-key', algorithm: 'RS256', rsa_public_key: rsaPublicPem });
    expect(rs).toMatchObject({ key: 'rsa-key', algorithm: 'RS256', rsa_public_key: rsaPublicPem });
    await created('/consumers/ed25519-user/jwt', { key: 'ed25519-key', algorithm: 'EdDSA', rsa_public_key: spkiPem(ED25519.publicKey) });
    await created('/consumers/ed448-user/jwt', { key: 'ed448-key', algorithm: 'EdDSA', rsa_public_key: spkiPem(ED448.publicKey) });
    generatedJwt = await created('/consumers/generated-user/jwt', {});
    expect(generatedJwt.key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(generatedJwt.secret).toMatch(/^[A-Za-z0-9]{32}$/);
    await protectedRoute('jwt', [['jwt', { 'config.claims_to_verify': 'exp' }]]);

    // hmac-auth
    const hmac = await created('/consumers/hmac-user/hmac-auth', { username: 'hmac-login', secret: HMAC_SECRET });
    expect(hmac).toMatchObject({ username: 'hmac-login', consumer: { id: ids['hmac-user'] } });
    await protectedRoute('hmac', [['hmac-auth', {}]]);

    // ldap-auth against the real slapd
    const ldapConfig = { 'config.ldap_host': ldap.host, 'config.ldap_port': String(ldap.port), 'config.base_dn': ldap.baseDn, 'config.attribute': ldap.attribute };
    await protectedRoute('ldap', [['ldap-auth', ldapConfig]]);
    await protectedRoute('ldap-acl', [['ldap-auth', ldapConfig], ['acl', { 'config.allow': 'gold' }]]);

    // acl: groups through /consumers/{c}/acls
    for (const [consumer, key, groups] of [
      ['gold-member', 'gold-key', ['gold', 'vip']],
      ['silver-member', 'silver-key', ['silver']],
      ['guest', null, ['guests']],
    ] as const) {
      if (key) await created(`/consumers/${consumer}/key-auth`, { key });
      for (const group of groups) expect(await created(`/consumers/${consumer}/acls`, { group })).toMatchObject({ group, consumer: { id: ids[consumer] } });
    }
    await protectedRoute('acl-allow', [['key-auth', {}], ['acl', { 'config.allow': 'gold' }]]);
    await protectedRoute('acl-deny', [['key-auth', {}], ['acl', { 'config.deny': 'gold' }]]);
    await protectedRoute('acl-anon', [['key-auth', { 'config.anonymous': ids.guest! }], ['acl', { 'config.allow': ['guests', 'gold'] }]]);
    // Kong's deny-everyone-anonymous: an anonymous consumer without groups and a deny list
    await protectedRoute('acl-deny-anon', [['key-auth', { 'config.anonymous': ids['anon-key']! }], ['acl', { 'config.deny': 'everyone' }]]);

    // three authentication plugins: jwt (priority 1450) + key-auth (1250) + basic-auth (1100), each credential on
    // another consumer, so the consumer upstream tells which plugin decided
    await created('/consumers/alice/key-auth', { key: 'alice-key' });
    await created('/consumers/bob/basic-auth', { username: 'bob-login', password: 'bob-password' });
    await protectedRoute('and3', [['jwt', {}], ['key-auth', {}], ['basic-auth', {}]]);
    await protectedRoute('or3', [
      ['jwt', { 'config.anonymous': ids['anon-jwt']! }],
      ['key-auth', { 'config.anonymous': ids['anon-key']! }],
      ['basic-auth', { 'config.anonymous': ids['anon-basic']! }],
    ]);
    await topology.converge();
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
  });

  describe('jwt', () => {
    it('an HS256 token made here passes on every data plane, with the consumer and x-credential-identifier = the key', async () => {
      const token = hs256({ iss: 'hs-key', exp: nowSeconds() + 300 }, HS_SECRET);
      for (const init of [{ headers: { authorization: `Bearer ${token}` } }, {}]) {
        const path = 'headers' in init ? '/jwt/resource' : `/jwt/resource?jwt=${token}`;
        const res = await everywhere(path, init);
        expect(res.status).toBe(200);
        expect(res.body.path).toBe('/resource');
        expect(res.body.headers['x-consumer-id']).toBe(ids['jwt-user']);
        expect(res.body.headers['x-consumer-username']).toBe('jwt-user');
        expect(res.body.headers['x-credential-identifier']).toBe('hs-key');
        expect(res.body.headers['x-anonymous-consumer']).toBeUndefined();
      }
    });

    it('an RS256 credential verifies a token signed with the private key; the generated key and secret work too', async () => {
      const rsToken = await new SignJWT({ exp: nowSeconds() + 300 }).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).setIssuer('rsa-key').sign(rsaPrivate);
      const rs = await everywhere('/jwt', { headers: { authorization: `Bearer ${rsToken}` } });
      expect(rs.status).toBe(200);
      expect(rs.body.headers['x-consumer-id']).toBe(ids['rsa-user']);
      expect(rs.body.headers['x-credential-identifier']).toBe('rsa-key');

      const generated = hs256({ iss: generatedJwt.key, exp: nowSeconds() + 300 }, generatedJwt.secret);
      const gen = await everywhere('/jwt', { headers: { authorization: `Bearer ${generated}` } });
      expect(gen.status).toBe(200);
      expect(gen.body.headers['x-consumer-id']).toBe(ids['generated-user']);
      expect(gen.body.headers['x-credential-identifier']).toBe(generatedJwt.key);
    });

    /** Kong's EdDSA case: the token passes with the credential's key as identifier and its Authorization intact */
    async function verifiesEdDSA(key: string, consumer: string, privateKey: KeyObject): Promise<void> {
      const authorization = `Bearer ${eddsa({ iss: key, exp: nowSeconds() + 300 }, privateKey)}`;
      const res = await everywhere('/jwt/request', { headers: { authorization } });
      expect(res.status).toBe(200);
      expect(res.body.headers.authorization).toBe(authorization);
      expect(res.body.headers['x-credential-identifier']).toBe(key);
      expect(res.body.headers['x-consumer-id']).toBe(ids[consumer]);
    }

    it('verifies JWT with Ed25519 key', async () => {
      await verifiesEdDSA('ed25519-key', 'ed25519-user', ED25519.privateKey);
    });

    it('verifies JWT with Ed448 key', async () => {
      await verifiesEdDSA('ed448-key', 'ed448-user', ED448.privateKey);
      const forged = await everywhere('/jwt/request', { headers: { authorization: `Bearer ${eddsa({ iss: 'ed448-key', exp: nowSeconds() + 300 }, generateKeyPairSync('ed448').privateKey)}` } });
      expect(forged.status).toBe(401);
      expect(forged.body).toEqual({ message: 'Invalid signature' });
    });

    it('an expired token is 401 {"exp":"token expired"}; a token without exp is {"exp":"must be a number"}', async () => {
      const expired = await everywhere('/jwt', { headers: { authorization: `Bearer ${hs256({ iss: 'hs-key', exp: nowSeconds() - 10 }, HS_SECRET)}` } });
      expect(expired.status).toBe(401);
      expect(expired.body).toEqual({ exp: 'token expired' });
      const noExp = await everywhere('/jwt', { headers: { authorization: `Bearer ${hs256({ iss: 'hs-key' }, HS_SECRET)}` } });
      expect(noExp.status).toBe(401);
      expect(noExp.body).toEqual({ exp: 'must be a number' });
    });

    it("refuses a wrong signature, an unknown key, no token, and an HS256 token for the RS256 credential (the token's alg never decides)", async () => {
      const exp = nowSeconds() + 300;
      const cases: Array<[string, Record<string, string>, unknown]> = [
        ['wrong secret', { authorization: `Bearer ${hs256({ iss: 'hs-key', exp }, 'not-the-secret')}` }, { message: 'Invalid signature' }],
        ['unknown key', { authorization: `Bearer ${hs256({ iss: 'nobody', exp }, HS_SECRET)}` }, { message: "No credentials found for given 'iss'" }],
        // the classic confusion: HMAC over the token with the RSA public key as the secret
        ['HS256 for RS256', { authorization: `Bearer ${hs256({ iss: 'rsa-key', exp }, rsaPublicPem)}` }, { message: 'Invalid algorithm' }],
        ['no token', {}, { message: 'Unauthorized' }],
      ];
      for (const [label, headers, body] of cases) {
        const res = await everywhere('/jwt/refused', { headers });
        expect({ label, status: res.status, body: res.body }).toEqual({ label, status: 401, body });
      }
      expect(upstream.received.filter((r) => r.path === '/refused')).toEqual([]);
    });
  });

  describe('hmac-auth', () => {
    /** Kong's spec signature: date, content-md5 and one more line (the request line or the request target) */
    const kongSigned = (date: string, lastName: string, lastLine: string) => {
      const signature = createHmac('sha1', HMAC_SECRET).update(`date: ${date}\ncontent-md5: md5\n${lastLine}`).digest('base64');
      return `hmac username="hmac-login",  algorithm="hmac-sha1", headers="date content-md5 ${lastName}", signature="${signature}"`;
    };

    it('should pass with GET with @request-target', async () => {
      const date = new Date().toUTCString();
      const authorization = kongSigned(date, '@request-target', '@request-target: get /hmac/request?x=1');
      const res = await everywhere('/hmac/request?x=1', { headers: { date, 'content-md5': 'md5', authorization } });
      expect(res.status).toBe(200);
      expect(res.body.headers['x-credential-identifier']).toBe('hmac-login');
    });

    it('should encode http-1 requests as http/1.0', async () => {
      const date = new Date().toUTCString();
      const authorization = kongSigned(date, 'request-line', 'GET /hmac/request HTTP/1.0');
      for (const dp of topology.dataPlanes) {
        const head = `GET /hmac/request HTTP/1.0\r\nhost: hmacauth.test\r\ndate: ${date}\r\ncontent-md5: md5\r\nauthorization: ${authorization}`;
        const res = await rawRequest(Number(new URL(dp.proxyUrl).port), { head });
        expect(res.status).toBe(200);
        // the same request signed as HTTP/1.1 is not what was sent
        const wrong = kongSigned(date, 'request-line', 'GET /hmac/request HTTP/1.1');
        const refused = await rawRequest(Number(new URL(dp.proxyUrl).port), { head: head.replace(authorization, wrong) });
        expect(refused.status).toBe(401);
      }
    });

    it('a request signed over date and the request line passes on every data plane', async () => {
      for (const dp of topology.dataPlanes) {
        // the request line is signed as the client sent it, percent-encoding included
        const path = '/hmac/signed?a=1&b=two%20words';
        const res = await proxied(`${dp.proxyUrl}${path}`, { headers: hmacSigned(path, 'hmac-login', HMAC_SECRET) });
        expect(res.status).toBe(200);
        expect(res.body.path).toBe('/signed');
        expect(res.body.query).toEqual({ a: '1', b: 'two words' });
        expect(res.body.headers['x-consumer-id']).toBe(ids['hmac-user']);
        expect(res.body.headers['x-consumer-username']).toBe('hmac-user');
        expect(res.body.headers['x-credential-identifier']).toBe('hmac-login');
      }
    });

    it('a wrong signature, a signature for another path, a stale date and an unknown user are 401 with Kong\'s messages', async () => {
      const wrongSecret = await everywhere('/hmac/x', { headers: hmacSigned('/hmac/x', 'hmac-login', 'wrong-secret') });
      expect(wrongSecret.status).toBe(401);
      expect(wrongSecret.body).toEqual({ message: 'HMAC signature does not match' });
      expect(wrongSecret.headers.get('www-authenticate')).toBe('hmac');

      const otherPath = await everywhere('/hmac/y', { headers: hmacSigned('/hmac/x', 'hmac-login', HMAC_SECRET) });
      expect(otherPath.status).toBe(401);
      expect(otherPath.body).toEqual({ message: 'HMAC signature does not match' });

      const stale = await everywhere('/hmac/x', { headers: hmacSigned('/hmac/x', 'hmac-login', HMAC_SECRET, { date: new Date(Date.now() - 3_600_000).toUTCString() }) });
      expect(stale.status).toBe(401);
      expect(stale.body).toEqual({ message: 'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication' });

      const unknown = await everywhere('/hmac/x', { headers: hmacSigned('/hmac/x', 'nobody', HMAC_SECRET) });
      expect(unknown.status).toBe(401);
      expect(unknown.body).toEqual({ message: 'HMAC signature cannot be verified' });

      const none = await everywhere('/hmac/x');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ message: 'Unauthorized' });
      expect(upstream.received.filter((r) => r.path === '/x' || r.path === '/y')).toEqual([]);
    });
  });

  describe('ldap-auth (real slapd)', () => {
    it('binds the user: only x-credential-identifier goes upstream, no consumer headers, even forged ones', async () => {
      for (const [user, password] of [['einstein', 'relativity'], ['curie', 'radium']] as const) {
        const res = await everywhere('/ldap/lab', {
          headers: { authorization: ldapHeader(user, password), 'x-consumer-id': 'forged', 'x-consumer-username': 'forged' },
        });
        expect(res.status).toBe(200);
        expect(res.body.path).toBe('/lab');
        expect(res.body.headers['x-credential-identifier']).toBe(user);
        expect(res.body.headers['x-consumer-id']).toBeUndefined();
        expect(res.body.headers['x-consumer-username']).toBeUndefined();
        expect(res.body.headers['x-anonymous-consumer']).toBeUndefined();
      }
    });

    it('a wrong password or unknown user is 401 Invalid authentication credentials; no header is 401 Unauthorized', async () => {
      for (const [user, password] of [['einstein', 'wrong'], ['nobody', 'relativity']]) {
        const res = await everywhere('/ldap', { headers: { authorization: ldapHeader(user!, password!) } });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ message: 'Invalid authentication credentials' });
        expect(res.headers.get('www-authenticate')).toBe('LDAP');
      }
      const none = await everywhere('/ldap');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ message: 'Unauthorized' });
    });

    it('acl after ldap-auth: a bound user is a credential without a consumer, so an allow list answers 403', async () => {
      const res = await everywhere('/ldap-acl', { headers: { authorization: ldapHeader('einstein', 'relativity') } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'You cannot consume this service' });
    });
  });

  describe('acl', () => {
    it('allow: a member of the group passes with x-consumer-groups (the client\'s copy replaced); others get 403', async () => {
      const gold = await everywhere('/acl-allow', { headers: { apikey: 'gold-key', 'x-consumer-groups': 'admins' } });
      expect(gold.status).toBe(200);
      expect(gold.body.headers['x-consumer-id']).toBe(ids['gold-member']);
      // Kong lists a consumer's groups joined by ", " in no particular order
      expect(gold.body.headers['x-consumer-groups'].split(', ').sort()).toEqual(['gold', 'vip']);
      const silver = await everywhere('/acl-allow', { headers: { apikey: 'silver-key' } });
      expect(silver.status).toBe(403);
      expect(silver.body).toEqual({ message: 'You cannot consume this service' });
    });

    it('deny: the listed group gets 403, everyone else passes with its groups', async () => {
      const gold = await everywhere('/acl-deny', { headers: { apikey: 'gold-key' } });
      expect(gold.status).toBe(403);
      expect(gold.body).toEqual({ message: 'You cannot consume this service' });
      const silver = await everywhere('/acl-deny', { headers: { apikey: 'silver-key' } });
      expect(silver.status).toBe(200);
      expect(silver.body.headers['x-consumer-groups']).toBe('silver');
    });

    it('the anonymous consumer\'s groups count: guests pass anonymously, a known consumer outside the list does not', async () => {
      const anonymous = await everywhere('/acl-anon');
      expect(anonymous.status).toBe(200);
      expect(anonymous.body.headers['x-consumer-id']).toBe(ids.guest);
      expect(anonymous.body.headers['x-anonymous-consumer']).toBe('true');
      expect(anonymous.body.headers['x-consumer-groups']).toBe('guests');
      expect((await everywhere('/acl-anon', { headers: { apikey: 'gold-key' } })).status).toBe(200);
      const silver = await everywhere('/acl-anon', { headers: { apikey: 'silver-key' } });
      expect(silver.status).toBe(403);
    });

    it('returns 200 with deny groups: a consumer without groups passes with an empty x-consumer-groups', async () => {
      const res = await everywhere('/acl-deny-anon', { headers: { 'x-consumer-groups': 'forged' } });
      expect(res.status).toBe(200);
      expect(res.body.headers['x-consumer-id']).toBe(ids['anon-key']);
      expect(res.body.headers['x-consumer-groups']).toBe('');
    });

    it('removing a group through /consumers/{c}/acls/{group} takes the access away on every data plane', async () => {
      const listed = await admin.get('/consumers/gold-member/acls');
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((a: { group: string }) => a.group).sort()).toEqual(['gold', 'vip']);
      expect((await admin.delete('/consumers/gold-member/acls/gold')).status).toBe(204);
      await topology.converge();
      const res = await everywhere('/acl-allow', { headers: { apikey: 'gold-key' } });
      expect(res.status).toBe(403);
      const deny = await everywhere('/acl-deny', { headers: { apikey: 'gold-key' } });
      expect(deny.status).toBe(200);
      expect(deny.body.headers['x-consumer-groups']).toBe('vip');
    });
  });

  describe('three authentication plugins at once: jwt + key-auth + basic-auth', () => {
    const ALICE_KEY = { apikey: 'alice-key' };
    const BOB_BASIC = { authorization: basicAuth('bob-login', 'bob-password') };
    const jwtQuery = () => `jwt=${hs256({ iss: 'hs-key' }, HS_SECRET)}`;

    it('AND: all three are needed, and basic-auth, executed last, sets the identity', async () => {
      const all = await everywhere(`/and3/x?${jwtQuery()}`, { headers: { ...ALICE_KEY, ...BOB_BASIC } });
      expect(all.status).toBe(200);
      expect(all.body.headers['x-consumer-id']).toBe(ids.bob);
      expect(all.body.headers['x-consumer-username']).toBe('bob');
      expect(all.body.headers['x-credential-identifier']).toBe('bob-login');
      expect(all.body.headers['x-anonymous-consumer']).toBeUndefined();

      // any one missing: that plugin's own refusal
      const noJwt = await everywhere('/and3', { headers: { ...ALICE_KEY, ...BOB_BASIC } });
      expect({ status: noJwt.status, body: noJwt.body }).toEqual({ status: 401, body: { message: 'Unauthorized' } });
      const noKey = await everywhere(`/and3?${jwtQuery()}`, { headers: BOB_BASIC });
      expect({ status: noKey.status, body: noKey.body }).toEqual({ status: 403, body: { message: 'No API key found in headers or querystring' } });
      const noBasic = await everywhere(`/and3?${jwtQuery()}`, { headers: ALICE_KEY });
      expect(noBasic.status).toBe(401);
      expect(noBasic.headers.get('www-authenticate')).toBe('Basic realm="service"');
      // each alone is not enough: jwt, first by priority, refuses the first two, key-auth the third
      for (const headers of [ALICE_KEY, BOB_BASIC]) {
        const alone = await everywhere('/and3', { headers });
        expect({ status: alone.status, body: alone.body }).toEqual({ status: 401, body: { message: 'Unauthorized' } });
      }
      expect((await everywhere(`/and3?${jwtQuery()}`)).status).toBe(403);
      // only the request with all three credentials reached the upstream
      const reached = upstream.received.filter((r) => r.headers['x-forwarded-prefix'] === '/and3');
      expect(reached.length).toBeGreaterThan(0);
      expect(reached.filter((r) => r.headers['x-consumer-id'] !== ids.bob)).toEqual([]);
    });

    it('OR: each credential alone suffices; with several, the first plugin to authenticate (jwt) wins', async () => {
      const jwtOnly = await everywhere(`/or3?${jwtQuery()}`);
      expect(jwtOnly.status).toBe(200);
      expect(jwtOnly.body.headers['x-consumer-id']).toBe(ids['jwt-user']);
      expect(jwtOnly.body.headers['x-credential-identifier']).toBe('hs-key');
      const keyOnly = await everywhere('/or3', { headers: ALICE_KEY });
      expect(keyOnly.status).toBe(200);
      expect(keyOnly.body.headers['x-consumer-id']).toBe(ids.alice);
      const basicOnly = await everywhere('/or3', { headers: BOB_BASIC });
      expect(basicOnly.status).toBe(200);
      expect(basicOnly.body.headers['x-consumer-id']).toBe(ids.bob);
      expect(basicOnly.body.headers['x-credential-identifier']).toBe('bob-login');
      for (const res of [jwtOnly, keyOnly, basicOnly]) expect(res.body.headers['x-anonymous-consumer']).toBeUndefined();

      const all = await everywhere(`/or3?${jwtQuery()}`, { headers: { ...ALICE_KEY, ...BOB_BASIC } });
      expect(all.body.headers['x-consumer-id']).toBe(ids['jwt-user']);
    });

    it('OR: none valid → the last plugin\'s anonymous consumer, x-anonymous-consumer: true, no credential', async () => {
      const bad: Array<Record<string, string>> = [{}, { apikey: 'wrong' }, { apikey: 'wrong', authorization: basicAuth('bob-login', 'wrong') }];
      for (const headers of bad) {
        const res = await everywhere(`/or3?jwt=${hs256({ iss: 'hs-key' }, 'wrong-secret')}`, { headers });
        expect(res.status).toBe(200);
        expect(res.body.headers['x-consumer-id']).toBe(ids['anon-basic']);
        expect(res.body.headers['x-consumer-username']).toBe('anon-basic');
        expect(res.body.headers['x-anonymous-consumer']).toBe('true');
        expect(res.body.headers['x-credential-identifier']).toBeUndefined();
      }
    });
  });
});
