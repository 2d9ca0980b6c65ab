// Decision 28, in both topologies: no secret in clear outside the control plane's database. Whoever reads Redis
// (every key under the cluster's prefix, and the announcements on its channel) or a data plane's disk cache, and
// decodes what can be decoded there (base64, gzip), finds no key-auth key, basic-auth password, private key, oauth2
// client secret or oauth2 token. A snapshot in Redis or in the cache that is altered, or sealed or signed under
// another secret, is refused and the data plane keeps serving its last good config.
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { buildSnapshot, emptyConfig } from '@gatehouse/core';
import { signSnapshot } from '@gatehouse/sync';
import { SHARED_REDIS_URL, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { basicAuth, waitUntil } from './support/helpers';
import { adminClient, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const CACHE_FILE = 'data-plane-snapshot.json';
const FOREIGN_SECRET = 'another-cluster-secret-0123456789abcdef';

/** `text` and, for every string in it that is base64 of gzip (or JSON holding such strings), what it decodes to */
function revealed(text: string, depth = 0): string {
  const found: string[] = [text];
  if (depth > 3) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = text;
  }
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v.length >= 16 && /^[A-Za-z0-9+/]+={0,2}$/.test(v)) {
        try {
          found.push(revealed(gunzipSync(Buffer.from(v, 'base64')).toString('utf8'), depth + 1));
        } catch {}
      }
      if (v !== text && (v.startsWith('{') || v.startsWith('['))) found.push(revealed(v, depth + 1));
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(value);
  return found.join('\n');
}

/** every key under `prefix` with its value, as raw as Redis gives them */
async function redisContents(redis: Redis, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      out.push(key);
      const type = await redis.type(key);
      if (type === 'string') out.push(((await redis.getBuffer(key)) ?? Buffer.alloc(0)).toString('utf8'));
      else if (type === 'zset') out.push(...(await redis.zrange(key, '0', '-1')));
      else if (type === 'hash') out.push(...Object.entries(await redis.hgetall(key)).flat());
      else if (type === 'list') out.push(...(await redis.lrange(key, 0, -1)));
      else if (type === 'set') out.push(...(await redis.smembers(key)));
    }
  } while (cursor !== '0');
  return out;
}

/** the highest version a data plane's disk cache holds (its snapshot, then the deltas after it) */
function cachedVersion(dataDir: string): number {
  const file = join(dataDir, CACHE_FILE);
  if (!existsSync(file)) return -1;
  let version = JSON.parse(readFileSync(file, 'utf8')).version as number;
  if (existsSync(`${file}.deltas`)) {
    for (const line of readFileSync(`${file}.deltas`, 'utf8').split('\n')) if (line) version = Math.max(version, JSON.parse(line).version);
  }
  return version;
}

/** the disk cache's files, a line at a time (the deltas file holds one JSON document per line) */
function cacheLines(dataDir: string): string[] {
  return readdirSync(dataDir)
    .filter((f) => f.startsWith(CACHE_FILE))
    .flatMap((f) => readFileSync(join(dataDir, f), 'utf8').split('\n'));
}

describe.each(TOPOLOGIES)('no secret in clear outside the database (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;
  let redis: Redis | null = null;
  let subscriber: Redis | null = null;
  const announcements: string[] = [];
  const apiKey = `key-${randomBytes(12).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const clientSecret = `cs-${randomBytes(12).toString('hex')}`;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  /** the PEM body without its armour lines, as it would appear in JSON */
  const privateBody = privatePem.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
  const tokens: string[] = [];

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name, { env: { GATEHOUSE_TRUSTED_IPS: '127.0.0.1' } });
    admin = adminClient(topology.adminUrl);
    if (topology.redisPrefix) {
      redis = new Redis(SHARED_REDIS_URL);
      subscriber = new Redis(SHARED_REDIS_URL);
      subscriber.on('message', (_channel: string, message: string) => announcements.push(message));
      await subscriber.subscribe(`${topology.redisPrefix}config`);
    }
    await created('/consumers/', { username: 'holder' });
    await created('/consumers/holder/key-auth', { key: apiKey });
    await created('/consumers/holder/basic-auth', { username: 'holder-basic', password });
    await created('/consumers/holder/oauth2', { name: 'App', client_id: 'at-rest-client', client_secret: clientSecret });
    await created('/keys', { name: 'signing-key', kid: 'at-rest-kid', 'pem.private_key': privatePem, 'pem.public_key': publicPem });
    await created('/services/', { name: 'guarded', url: `${upstream.url}/` });
    await created('/services/guarded/routes', { name: 'keyed', 'paths[]': '/keyed' });
    await created('/routes/keyed/plugins', { name: 'key-auth' });
    await created('/services/guarded/routes', { name: 'basic', 'paths[]': '/basic' });
    await created('/routes/basic/plugins', { name: 'basic-auth' });
    await created('/services/guarded/routes', { name: 'oauth', 'paths[]': '/oauth' });
    const oauth = await created('/routes/oauth/plugins', {
      name: 'oauth2',
      'config.enable_password_grant': 'true',
      'config.accept_http_if_already_terminated': 'true',
    });
    await topology.converge(30_000);
    const issued = await proxied(`${topology.proxyUrl}/oauth/oauth2/token`, {
      method: 'POST',
      headers: { 'x-forwarded-proto': 'https' },
      body: new URLSearchParams({ grant_type: 'password', provision_key: oauth.config.provision_key, authenticated_userid: 'u-1', client_id: 'at-rest-client', client_secret: clientSecret }),
    });
    expect(issued.status).toBe(200);
    tokens.push(issued.body.access_token, issued.body.refresh_token);
  }, 180_000);

  afterAll(async () => {
    subscriber?.disconnect();
    redis?.disconnect();
    await topology?.stop();
    await upstream?.close();
  });

  it('Redis, its announcements and every disk cache show no credential, even decoded, while every credential works', async () => {
    // the reader played here finds a secret in what earlier releases stored: base64 of gzip of JSON
    expect(revealed(JSON.stringify({ payload: gzipSync(JSON.stringify({ key: apiKey })).toString('base64') }))).toContain(apiKey);
    const version = await topology.converge(30_000);
    for (const dp of topology.dataPlanes) {
      expect((await proxied(`${dp.proxyUrl}/keyed`, { headers: { apikey: apiKey } })).status).toBe(200);
      expect((await proxied(`${dp.proxyUrl}/basic`, { headers: { authorization: basicAuth('holder-basic', password) } })).status).toBe(200);
      expect((await proxied(`${dp.proxyUrl}/oauth`, { headers: { authorization: `Bearer ${tokens[0]}` } })).status).toBe(200);
      await waitUntil('the disk cache to hold the served version', () => cachedVersion(dp.dataDir) >= version, 15_000);
    }

    // every key, value, line and message on its own, so that each JSON document in them is decoded
    const places: Array<[string, string[]]> = topology.dataPlanes.map((dp, i) => [`data plane ${i}'s disk cache`, cacheLines(dp.dataDir)]);
    if (redis && topology.redisPrefix) {
      const contents = await redisContents(redis, topology.redisPrefix);
      expect(contents).toContain(`${topology.redisPrefix}snapshot`);
      places.push(['Redis', contents]);
      expect(announcements.length).toBeGreaterThan(0);
      places.push(['the announcements', announcements]);
    }
    expect(places.length).toBeGreaterThan(0);
    const secrets: Record<string, string> = {
      'the key-auth key': apiKey,
      'the basic-auth password': password,
      'the oauth2 client secret': clientSecret,
      "the private key's PEM body": privateBody.slice(0, 40),
      'the oauth2 access token': tokens[0]!,
      'the oauth2 refresh token': tokens[1]!,
    };
    const leaks: string[] = [];
    for (const [where, texts] of places) {
      const plain = texts.map((text) => revealed(text)).join('\n');
      for (const [what, secret] of Object.entries(secrets)) if (plain.includes(secret)) leaks.push(`${what} in ${where}`);
    }
    expect(leaks).toEqual([]);
  });

  it('a disk cache altered, or sealed under another secret, is refused at restart: the good config is served', async () => {
    const index = topology.dataPlanes.length - 1;
    const dp = topology.dataPlanes[index]!;
    const secret = name === 'cluster' ? dp.env.GATEHOUSE_CLUSTER_SECRET! : readFileSync(join(dp.dataDir, 'cluster-secret'), 'utf8').trim();
    const file = join(dp.dataDir, CACHE_FILE);
    const cached = JSON.parse(readFileSync(file, 'utf8'));
    // a newer config without routes, sealed under another secret and signed with this cluster's: loading it would 404
    const forged = signSnapshot({ ...buildSnapshot(cached.version + 1000, emptyConfig()), epoch: cached.epoch }, FOREIGN_SECRET);
    forged.signature = createHmac('sha256', secret).update(forged.payload).digest('hex');
    await dp.process.stop();
    writeFileSync(file, JSON.stringify(forged));
    await topology.restartDataPlane(index);
    await waitUntil('the refusal to be logged', () => /payload cannot be decoded/.test(dp.process.output()), 30_000);
    expect((await proxied(`${dp.proxyUrl}/keyed`, { headers: { apikey: apiKey } })).status).toBe(200);

    // altered bytes under the original signature
    const bytes = Buffer.from(cached.payload, 'base64');
    bytes[bytes.length >> 1]! ^= 1;
    await dp.process.stop();
    writeFileSync(file, JSON.stringify({ ...cached, payload: bytes.toString('base64') }));
    await topology.restartDataPlane(index);
    await waitUntil('the refusal to be logged', () => /signature does not match/.test(dp.process.output()), 30_000);
    expect((await proxied(`${dp.proxyUrl}/keyed`, { headers: { apikey: apiKey } })).status).toBe(200);
    await topology.converge(30_000);
    // two restarts of a whole node (in embedded mode, with its database)
  }, 300_000);

  if (name === 'cluster') {
    it('a snapshot in Redis sealed under another secret, or signed with one, is refused: the data planes keep serving', async () => {
      const dp = topology.dataPlanes[0]!;
      const status = (await (await fetch(`${dp.statusUrl}/status`)).json()) as any;
      const serving = status.config_version as number;
      const epoch = status.sync.config_epoch as string;
      const prefix = topology.redisPrefix!;
      const secret = dp.env.GATEHOUSE_CLUSTER_SECRET!;
      const plant = async (signed: ReturnType<typeof signSnapshot>) => {
        const head = JSON.stringify({ version: signed.version, hash: signed.hash, epoch: signed.epoch });
        await redis!.multi().set(`${prefix}snapshot`, JSON.stringify(signed)).set(`${prefix}snapshot:head`, head).exec();
        await redis!.publish(`${prefix}config`, head);
      };
      const empty = (version: number) => ({ ...buildSnapshot(version, emptyConfig()), epoch });

      const from = dp.process.output().length;
      const sealedElsewhere = signSnapshot(empty(serving + 1000), FOREIGN_SECRET);
      await plant({ ...sealedElsewhere, signature: createHmac('sha256', secret).update(sealedElsewhere.payload).digest('hex') });
      await dp.process.waitForOutput(/payload cannot be decoded/, 30_000, from);
      await plant(signSnapshot(empty(serving + 2000), FOREIGN_SECRET));
      await dp.process.waitForOutput(/signature does not match/, 30_000, from);

      for (const plane of topology.dataPlanes) {
        expect((await proxied(`${plane.proxyUrl}/keyed`, { headers: { apikey: apiKey } })).status).toBe(200);
        const after = (await (await fetch(`${plane.statusUrl}/status`)).json()) as any;
        expect(after.config_version).toBe(serving);
      }
    }, 90_000);
  }
});
