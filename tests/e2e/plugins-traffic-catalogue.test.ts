// Kong's own specs for redirect (spec/03-plugins/45-redirect), bot-detection (21-bot-detection), standard-webhooks
// (44-standard-webhooks), response-ratelimiting (24-response-rate-limiting) and session (30-session), through the real
// admin API and proxy in both topologies, with Kong's `it` names. Kong routes by host; these routes are paths. Kong's
// response-ratelimiting specs count per second; these count per minute, clear of the minute's edge, so a slow machine
// cannot cross a window mid-test. Counting happens once the exchange is over (Kong's log phase): tests poll for it.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rawRequest, SHARED_REDIS_URL } from '@gatehouse/testkit';
import { startHeaderUpstream, type HeaderUpstream } from './support/header-upstream';
import { createdThrough, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const MINUTE_MS = 60_000;
const ITERATIONS = 6;
const SECRET = 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MESSAGE_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const FACEBOOK = 'facebookexternalhit/1.1';
const HELLOWORLD = 'HelloWorld';
const BAD_REGEX = '(https?:\\/\\/.*';
const redisPort = Number(new URL(SHARED_REDIS_URL).port || 6379);

/** Kong's `swh.sign`: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` keyed with the secret as given. */
const sign = (secret: string, id: string, ts: number, body: string) => `v1,${createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest('base64')}`;

async function clearOfMinuteEdge(marginMs = 10_000): Promise<void> {
  const left = MINUTE_MS - (Date.now() % MINUTE_MS);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

async function eventually<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

describe.each(TOPOLOGIES)('Kong specs: redirect, bot-detection, standard-webhooks, response-ratelimiting, session (%s)', (name) => {
  let topology: Topology;
  let upstream: HeaderUpstream;
  const ids: Record<string, string> = {};

  const admin = (method: string, path: string, body?: unknown) => jsonAdmin(topology.adminUrl, method, path, body);
  const created = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
  const url = (path: string, via = topology.proxyUrl) => `${via}${path}`;
  const proxyPort = () => Number(new URL(topology.proxyUrl).port);

  /** a service and route named `label` at `path` (default /label), with the given plugins on the route */
  async function routeWith(label: string, plugins: Array<Record<string, unknown>>, path = `/${label}`): Promise<void> {
    await created('/services', { name: label, url: `${upstream.url}/` });
    await created(`/services/${label}/routes`, { name: label, paths: [path] });
    for (const plugin of plugins) await created(`/routes/${label}/plugins`, plugin);
  }
  const limits = (config: Record<string, unknown>) => ({ name: 'response-ratelimiting', config });
  const keyAuth = () => ({ name: 'key-auth', config: { anonymous: ids.anon } });

  beforeAll(async () => {
    upstream = await startHeaderUpstream();
    topology = await startTopology(name);
    ids.anon = (await created('/consumers', { username: 'anon' })).id;
    ids.coop = (await created('/consumers', { username: 'coop' })).id;
    ids.credential = (await created('/consumers/coop/key-auth', { key: 'kong' })).id;
    await created('/consumers/anon/plugins', { name: 'request-termination', config: { status_code: 403, message: 'So it goes.' } });

    await routeWith('redirect1', [{ name: 'redirect', config: { location: 'https://example.com' } }]);
    await routeWith('redirect2', [{ name: 'redirect', config: { status_code: 302, location: 'https://example.com' } }]);
    await routeWith('redirect3', [{ name: 'redirect', config: { location: 'https://example.com/path?foo=bar' } }]);
    await routeWith('redirect4', [{ name: 'redirect', config: { location: 'https://example.com/some_path?foo=bar', keep_incoming_path: true } }], '/status');

    await routeWith('bot', [{ name: 'bot-detection', config: {} }]);
    await routeWith('bot2', [{ name: 'bot-detection', config: { deny: [HELLOWORLD] } }]);
    await routeWith('bot3', [{ name: 'bot-detection', config: { allow: [FACEBOOK] } }]);

    await routeWith('webhooks', [{ name: 'standard-webhooks', config: { secret_v1: SECRET } }]);

    await routeWith('rrl1', [limits({ limits: { video: { minute: ITERATIONS } } })]);
    await routeWith('rrl2', [limits({ limits: { video: { minute: ITERATIONS * 2, hour: ITERATIONS * 4 }, image: { minute: ITERATIONS } } })]);
    await routeWith('rrl4', [limits({ limits: { video: { minute: ITERATIONS * 2 + 2 }, image: { minute: ITERATIONS } } })]);
    await routeWith('rrl7', [limits({ limits: { video: { minute: ITERATIONS, hour: ITERATIONS * 2 }, image: { minute: 4 } }, block_on_first_violation: true })]);
    await routeWith('rrl8', [limits({ limits: { video: { minute: ITERATIONS, hour: ITERATIONS * 2 }, image: { minute: ITERATIONS - 1 } } })]);
    await routeWith('rrl9', [limits({ limits: { video: { minute: ITERATIONS } }, hide_client_headers: true })]);
    await routeWith('rrl-consumer', [{ name: 'key-auth' }, limits({ limits: { video: { minute: ITERATIONS - 2 } } })]);
    const redis = { host: '127.0.0.1', port: redisPort };
    await routeWith('rrl-redis', [limits({ policy: 'redis', redis, fault_tolerant: false, limits: { video: { minute: ITERATIONS } } })]);

    await routeWith('test1', [{ name: 'session' }, keyAuth()]);
    await routeWith('test2', [{ name: 'session', config: { cookie_name: 'da_cookie', cookie_same_site: 'Lax', cookie_http_only: false, cookie_secure: false } }, keyAuth()]);
    await routeWith('test5', [{ name: 'session', config: { remember_rolling_timeout: 3600, remember: true } }, keyAuth()]);
    await routeWith('logout', [{ name: 'session', config: { logout_methods: ['GET', 'POST'], read_body_for_logout: true, request_headers: ['id', 'subject'] } }, keyAuth()]);
    await routeWith('idle', [{ name: 'session', config: { idling_timeout: 2 } }, keyAuth()]);
    await routeWith('stored', [{ name: 'session', config: { storage: 'kong', logout_methods: ['GET'] } }, keyAuth()]);
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
  });

  describe('redirect', () => {
    const go = (path: string) => proxied(url(path), { redirect: 'manual' });

    it('default status code', async () => {
      const res = await go('/redirect1/status/200');
      expect([res.status, res.body]).toEqual([301, 'redirecting']);
      expect(res.headers.get('location')).toBe('https://example.com');
      expect(upstream.received.get('/status/200')).toBeUndefined();
    });

    it('custom status code', async () => {
      expect((await go('/redirect2/status/200')).status).toBe(302);
    });

    it('supports path and query params in location', async () => {
      expect((await go('/redirect3/status/200')).headers.get('location')).toBe('https://example.com/path?foo=bar');
    });

    it('keeps the existing redirect URL', async () => {
      expect((await go('/status/200?keep=this')).headers.get('location')).toBe('https://example.com/status/200?keep=this');
      expect((await go('/status/200')).headers.get('location')).toBe('https://example.com/status/200');
    });

    it.each([
      ['status_code should only accept integers', { status_code: 'abcd', location: 'https://example.com' }, 'status_code', 'expected an integer'],
      ['status_code is not nullable', { status_code: null, location: 'https://example.com' }, 'status_code', 'required field missing'],
      ['status_code < 100', { status_code: 99, location: 'https://example.com' }, 'status_code', 'value should be between 100 and 599'],
      ['status_code > 599', { status_code: 600, location: 'https://example.com' }, 'status_code', 'value should be between 100 and 599'],
      ['location is required', { status_code: 301 }, 'location', 'required field missing'],
      ['location must be a url', { status_code: 301, location: 'definitely_not_a_url' }, 'location', 'missing host in url'],
      ['incoming_path must be a boolean', { status_code: 301, location: 'https://example.com', keep_incoming_path: 'invalid' }, 'keep_incoming_path', 'expected a boolean'],
    ])('%s', async (_name, config, field, message) => {
      const res = await admin('POST', '/plugins', { name: 'redirect', config });
      expect(res.status).toBe(400);
      expect(res.body.fields.config[field]).toBe(message);
    });
  });

  describe('bot-detection', () => {
    const withAgent = (path: string, agent: string) => proxied(url(path), { headers: { 'user-agent': agent } });

    it('allows regular requests', async () => {
      const bare = await rawRequest(proxyPort(), { head: 'GET /bot/request HTTP/1.1\r\nhost: bot.test\r\nconnection: close' });
      expect(bare.status).toBe(200);
      const chrome = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/50.0.2661.102 Safari/537.36';
      for (const agent of [chrome, HELLOWORLD, 'curl/7.43.0']) expect([agent, (await withAgent('/bot/request', agent)).status]).toEqual([agent, 200]);
    });

    it('blocks bots', async () => {
      for (const agent of ['Googlebot/2.1 (+http://www.google.com/bot.html)', FACEBOOK]) {
        const res = await withAgent('/bot/request', agent);
        expect([agent, res.status, res.body]).toEqual([agent, 403, { message: 'Forbidden' }]);
      }
    });

    it('blocks denied user-agents', async () => {
      expect((await withAgent('/bot2/request', HELLOWORLD)).status).toBe(403);
    });

    it('allows allowed user-agents', async () => {
      expect((await withAgent('/bot3/request', FACEBOOK)).status).toBe(200);
    });

    it('refuses a request with several User-Agent headers (400)', async () => {
      const res = await rawRequest(proxyPort(), { head: 'GET /bot/request HTTP/1.1\r\nhost: bot.test\r\nuser-agent: a\r\nuser-agent: b\r\nconnection: close' });
      expect([res.status, JSON.parse(res.body)]).toEqual([400, { message: 'Only one User-Agent header allowed' }]);
    });

    it('fails when using a bad regex in allow', async () => {
      const res = await admin('POST', '/plugins', { name: 'bot-detection', config: { allow: [BAD_REGEX] } });
      expect(res.status).toBe(400);
      expect(res.body.name).toBe('schema violation');
      expect(res.body.fields.config.allow).toEqual([`not a valid regex: ${BAD_REGEX}`]);
    });

    it('fails when using a bad regex in deny', async () => {
      expect((await admin('POST', '/plugins', { name: 'bot-detection', config: { deny: [BAD_REGEX] } })).status).toBe(400);
    });

    it('refuses a pattern the linear-time engine cannot run (lookahead), decision 17', async () => {
      const res = await admin('POST', '/plugins', { name: 'bot-detection', config: { deny: ['bot(?=x)'] } });
      expect([res.status, res.body.fields?.config?.deny]).toEqual([400, ['not a valid regex: bot(?=x)']]);
    });
  });

  describe('standard-webhooks', () => {
    const post = (headers: Record<string, string>, body?: string) => proxied(url('/webhooks'), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const now = () => Math.floor(Date.now() / 1000);

    it('rejects missing headers', async () => {
      expect((await post({ 'webhook-id': MESSAGE_ID, 'webhook-timestamp': String(now()) }, '{"foo":"bar"}')).status).toBe(400);
    });

    it('rejects invalid timestamp', async () => {
      expect((await post({ 'webhook-id': MESSAGE_ID, 'webhook-signature': 'asdf', 'webhook-timestamp': 'XYZ' }, '{"foo":"bar"}')).status).toBe(400);
    });

    it('rejects missing body', async () => {
      expect((await post({ 'webhook-id': MESSAGE_ID, 'webhook-signature': 'asdf', 'webhook-timestamp': String(now()) })).status).toBe(400);
    });

    it('accepts correct signature', async () => {
      const ts = now();
      const res = await post({ 'webhook-id': MESSAGE_ID, 'webhook-signature': sign(SECRET, MESSAGE_ID, ts, '{"foo":"bar"}'), 'webhook-timestamp': String(ts) }, '{"foo":"bar"}');
      expect(res.status).toBe(200);
      expect(res.body.path).toBe('/');
    });

    it('fails because the timestamp tolerance is exceeded', async () => {
      const ts = now() - 6 * 60;
      const res = await post({ 'webhook-id': MESSAGE_ID, 'webhook-signature': sign(SECRET, MESSAGE_ID, ts, '{"foo":"bar"}'), 'webhook-timestamp': String(ts) }, '{"foo":"bar"}');
      expect([res.status, res.body]).toEqual([400, { message: 'Bad request' }]);
    });

    it('rejects a body that does not match the signature', async () => {
      const ts = now();
      const res = await post({ 'webhook-id': MESSAGE_ID, 'webhook-signature': sign(SECRET, MESSAGE_ID, ts, '{"foo":"bar"}'), 'webhook-timestamp': String(ts) }, '{"foo":"baz"}');
      expect(res.status).toBe(400);
    });

    it.each([
      ['must be set', { tolerance_second: 300 }, 'secret_v1', 'required field missing'],
      ['is not nullable', { secret_v1: null }, 'secret_v1', 'required field missing'],
      ['must be a string', { secret_v1: 123 }, 'secret_v1', 'expected a string'],
      ['must be an integer', { secret_v1: 'abc123', tolerance_second: 5.67 }, 'tolerance_second', 'expected an integer'],
      ['must be >= 0', { secret_v1: 'abc123', tolerance_second: -1 }, 'tolerance_second', 'value must be greater than -1'],
    ])('schema: %s', async (_name, config, field, message) => {
      const res = await admin('POST', '/plugins', { name: 'standard-webhooks', config });
      expect([res.status, res.body.fields?.config?.[field]]).toEqual([400, message]);
    });

    it('schema: tolerance_second gets a default', async () => {
      const res = await admin('POST', '/plugins', { name: 'standard-webhooks', config: { secret_v1: 'abc123' } });
      expect([res.status, res.body.config]).toEqual([201, { secret_v1: 'abc123', tolerance_second: 300 }]);
      // a global plugin for a moment: the data planes drop it before the next test proxies (it would refuse them)
      await admin('DELETE', `/plugins/${res.body.id}`);
      await topology.converge();
    });
  });

  describe('response-ratelimiting', () => {
    /** a request whose upstream declares `usage` (e.g. `video=1`; repeated lines as an array) */
    const spend = (route: string, usage: string | string[], headers: Record<string, string> = {}, via?: string) => {
      const query = (Array.isArray(usage) ? usage : [usage]).map((u) => `x-kong-limit=${encodeURIComponent(u)}`).join('&');
      return proxied(url(`/${route}/response-headers?${query}`, via), { headers });
    };
    /** polls with a request that spends nothing until `header` says `value` (the earlier requests were counted) */
    const counted = (route: string, header: string, value: number, headers: Record<string, string> = {}) =>
      eventually(`${route} ${header}=${value}`, () => spend(route, 'video=0', headers), (res) => res.headers.get(header) === String(value));

    beforeAll(() => clearOfMinuteEdge(20_000));

    it('returns remaining counter', async () => {
      const n = Math.floor(ITERATIONS / 2);
      for (let i = 0; i < n; i++) expect((await spend('rrl1', 'video=1')).status).toBe(200);
      await counted('rrl1', 'x-ratelimit-remaining-video-minute', ITERATIONS - n);
      const res = await spend('rrl1', 'video=1');
      expect(res.status).toBe(200);
      expect(Number(res.headers.get('x-ratelimit-limit-video-minute'))).toBe(ITERATIONS);
      expect(Number(res.headers.get('x-ratelimit-remaining-video-minute'))).toBe(ITERATIONS - n - 1);
      expect(res.headers.get('x-kong-limit')).toBeNull();
    });

    it('blocks if exceeding limit', async () => {
      await counted('rrl1', 'x-ratelimit-remaining-video-minute', ITERATIONS - 4);
      for (let i = 4; i < ITERATIONS; i++) expect((await spend('rrl1', 'video=1')).status).toBe(200);
      await counted('rrl1', 'x-ratelimit-remaining-video-minute', 0);
      const res = await spend('rrl1', 'video=1');
      expect([res.status, res.body]).toEqual([429, '']);
      expect(Number(res.headers.get('x-ratelimit-limit-video-minute'))).toBe(ITERATIONS);
      expect(Number(res.headers.get('x-ratelimit-remaining-video-minute'))).toBe(0);
    });

    it('handles multiple limits', async () => {
      const n = Math.floor(ITERATIONS / 2);
      for (let i = 0; i < n; i++) expect((await spend('rrl2', 'video=2, image=1')).status).toBe(200);
      const res = await counted('rrl2', 'x-ratelimit-remaining-image-minute', ITERATIONS - n);
      expect(Number(res.headers.get('x-ratelimit-limit-video-minute'))).toBe(ITERATIONS * 2);
      expect(Number(res.headers.get('x-ratelimit-remaining-video-minute'))).toBe(ITERATIONS * 2 - n * 2);
      expect(Number(res.headers.get('x-ratelimit-limit-video-hour'))).toBe(ITERATIONS * 4);
      expect(Number(res.headers.get('x-ratelimit-remaining-video-hour'))).toBe(ITERATIONS * 4 - n * 2);
      expect(Number(res.headers.get('x-ratelimit-limit-image-minute'))).toBe(ITERATIONS);
      for (let i = n; i < ITERATIONS; i++) expect((await spend('rrl2', 'video=1, image=1')).status).toBe(200);
      await counted('rrl2', 'x-ratelimit-remaining-image-minute', 0);
      const last = await spend('rrl2', 'video=1, image=1');
      expect(last.status).toBe(429);
      expect(Number(last.headers.get('x-ratelimit-remaining-image-minute'))).toBe(0);
      expect(Number(last.headers.get('x-ratelimit-remaining-video-hour'))).toBe(ITERATIONS * 4 - n * 2 - (ITERATIONS - n));
      expect(Number(last.headers.get('x-ratelimit-remaining-video-minute'))).toBe(ITERATIONS * 2 - n * 2 - (ITERATIONS - n));
    });

    it('should append the headers with multiple limits', async () => {
      const first = await proxied(url('/rrl8/get'));
      expect(first.body.headers['x-ratelimit-remaining-image']).toBe(String(ITERATIONS - 1));
      expect(first.body.headers['x-ratelimit-remaining-video']).toBe(String(ITERATIONS));
      expect((await spend('rrl8', 'video=2, image=1')).status).toBe(200);
      const after = await eventually('the usage counted', () => proxied(url('/rrl8/get')), (res) => res.body.headers['x-ratelimit-remaining-image'] === String(ITERATIONS - 2));
      expect(after.body.headers['x-ratelimit-remaining-video']).toBe(String(ITERATIONS - 2));
    });

    it('combines multiple x-kong-limit headers from upstream', async () => {
      for (let i = 0; i < ITERATIONS; i++) expect((await spend('rrl4', ['video=2', 'image=1'])).status).toBe(200);
      await spend('rrl4', 'video=1');
      await counted('rrl4', 'x-ratelimit-remaining-video-minute', 1);
      const res = await spend('rrl4', ['video=2', 'image=1']);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('x-ratelimit-remaining-image-minute'))).toBe(0);
      expect(Number(res.headers.get('x-ratelimit-remaining-video-minute'))).toBe(1);
    });

    it('should block on first violation', async () => {
      expect((await spend('rrl7', 'video=2, image=4')).status).toBe(200);
      const res = await eventually('the image limit spent', () => spend('rrl7', 'video=2'), (r) => r.status === 429);
      expect(res.body).toEqual({ message: "API rate limit exceeded for 'image'" });
    });

    it('does not send rate-limit headers when hide_client_headers==true', async () => {
      const res = await proxied(url('/rrl9/status/200'));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining-video-minute')).toBeNull();
      expect(res.headers.get('x-ratelimit-limit-video-minute')).toBeNull();
    });

    it('blocks if exceeding limit and a per consumer & route setting', async () => {
      const limit = ITERATIONS - 2;
      for (let i = 0; i < limit; i++) expect((await spend('rrl-consumer', 'video=1', { apikey: 'kong' })).status).toBe(200);
      await counted('rrl-consumer', 'x-ratelimit-remaining-video-minute', 0, { apikey: 'kong' });
      const res = await spend('rrl-consumer', 'video=1', { apikey: 'kong' });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('x-ratelimit-limit-video-minute'))).toBe(limit);
    });

    it('redis: blocks if exceeding limit, counting across data planes', async () => {
      const planes = topology.dataPlanes.map((dp) => dp.proxyUrl);
      for (let i = 0; i < ITERATIONS; i++) expect((await spend('rrl-redis', 'video=1', {}, planes[i % planes.length])).status).toBe(200);
      for (const via of planes) {
        await eventually('every data plane sees the spent limit', () => spend('rrl-redis', 'video=0', {}, via), (r) => r.headers.get('x-ratelimit-remaining-video-minute') === '0');
        const res = await spend('rrl-redis', 'video=1', {}, via);
        expect([res.status, res.headers.get('x-ratelimit-remaining-video-minute')]).toEqual([429, '0']);
      }
    });

    it.each([
      ['empty config', {}, 'required field missing'],
      ['empty limits', { limits: {} }, 'length must be at least 1'],
      ['limits: smaller unit is less than bigger unit', { limits: { video: { second: 2, minute: 1 } } }, 'the limit for minute(1.0) cannot be lower than the limit for second(2.0)'],
      ['limits: smaller unit is less than bigger unit (bis)', { limits: { video: { second: 1, minute: 2, hour: 3, day: 4, month: 6, year: 5 } } }, 'the limit for year(5.0) cannot be lower than the limit for month(6.0)'],
    ])('schema: %s', async (_name, config, message) => {
      const res = await admin('POST', '/plugins', { name: 'response-ratelimiting', config });
      expect([res.status, res.body.fields?.config?.limits]).toEqual([400, message]);
    });

    it('schema: a limit name that cannot go into a header name is refused with 400', async () => {
      const res = await admin('POST', '/plugins', { name: 'response-ratelimiting', config: { limits: { 'vid eo': { minute: 1 } } } });
      expect(res.status).toBe(400);
      expect(res.body.fields.config.limits).toBeDefined();
    });

    it("schema: limits: 'null' value does not cause 500, issue #8314", async () => {
      const res = await admin('POST', '/plugins', { name: 'response-ratelimiting', config: { limits: { video: { second: null, minute: 1 } } } });
      expect(res.status).toBe(201);
      // a global plugin for a moment: the data planes drop it before the next test proxies
      await admin('DELETE', `/plugins/${res.body.id}`);
      await topology.converge();
    });
  });

  describe('session', () => {
    const get = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) => proxied(url(path), { ...init, headers });
    const setCookies = (res: { headers: Headers }) => res.headers.getSetCookie();
    const cookiePair = (line: string) => line.split('; ')[0]!;

    it('plugin attaches Set-Cookie and cookie response headers', async () => {
      const res = await get('/test1/status/200', { apikey: 'kong' });
      expect(res.status).toBe(200);
      const [cookie] = setCookies(res);
      expect(cookie!.split('=')[0]).toBe('session');
      const parts = cookie!.split('; ');
      expect(parts.slice(1)).toEqual(['Path=/', 'SameSite=Strict', 'Secure', 'HttpOnly']);
    });

    it('cookie works as authentication after initial auth plugin', async () => {
      expect((await get('/test2/status/200')).status).toBe(403);
      const login = await get('/test2/status/200', { apikey: 'kong' });
      expect(login.status).toBe(200);
      const [cookie] = setCookies(login);
      expect(cookie!.split('=')[0]).toBe('da_cookie');
      expect(cookie!.split('; ').slice(1)).toEqual(['Path=/', 'SameSite=Lax']);
      const again = await get('/test2/status/200', { cookie: cookiePair(cookie!) });
      expect(again.status).toBe(200);
      // a cookie that was tampered with authenticates nobody
      const forged = cookiePair(cookie!).slice(0, -2) + (cookie!.split(';')[0]!.endsWith('AA') ? 'BB' : 'AA');
      expect((await get('/test2/status/200', { cookie: forged })).status).toBe(403);
    });

    it('plugin attaches Set-Cookie with max-age/expiry when cookie_persistent is true', async () => {
      const res = await get('/test5/status/200', { apikey: 'kong' });
      expect(res.status).toBe(200);
      const cookies = setCookies(res);
      expect(cookies.map((c) => c.split('=')[0])).toEqual(['session', 'remember']);
      const parts = cookies[1]!.split('; ');
      expect(parts.slice(1, 5)).toEqual(['Path=/', 'SameSite=Strict', 'Secure', 'HttpOnly']);
      expect(parts[5]).toMatch(/^Expires=/);
      expect(parts[6]).toBe('Max-Age=3600');
      // the remember cookie alone restores the session and issues a new session cookie
      const restored = await get('/test5/status/200', { cookie: cookiePair(cookies[1]!) });
      expect(restored.status).toBe(200);
      expect(setCookies(restored).map((c) => c.split('=')[0])).toEqual(['session']);
    });

    it('consumer headers are set correctly on request', async () => {
      const login = await get('/test1/headers', { apikey: 'kong' });
      const res = await get('/test1/headers', { cookie: cookiePair(setCookies(login)[0]!) });
      expect(res.status).toBe(200);
      const headers = res.body.headers;
      expect(headers['x-consumer-id']).toBe(ids.coop);
      expect(headers['x-consumer-username']).toBe('coop');
      expect(headers['x-credential-identifier']).toBe(ids.credential);
      expect(headers['x-anonymous-consumer']).toBeUndefined();
      expect(headers['x-consumer-custom-id']).toBeUndefined();
    });

    it('logs out with GET request', async () => {
      const cookie = cookiePair(setCookies(await get('/logout/status/200', { apikey: 'kong' }))[0]!);
      const inside = await get('/logout/anything', { cookie });
      expect([inside.status, inside.body.headers['session-subject']]).toEqual([200, 'coop']);
      expect(inside.body.headers['session-id']).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const out = await get('/logout/anything?session_logout=true', { cookie });
      expect([out.status, out.body]).toEqual([200, '']);
      expect(setCookies(out)[0]).toMatch(/^session=; Path=\/;.*Max-Age=0$/);
    });

    it('logs out with POST request with body', async () => {
      const cookie = cookiePair(setCookies(await get('/logout/status/200', { apikey: 'kong' }))[0]!);
      const out = await get('/logout/anything', { cookie, 'content-type': 'application/x-www-form-urlencoded' }, { method: 'POST', body: 'session_logout=true' });
      expect([out.status, out.body]).toEqual([200, '']);
    });

    it('does not logout with GET requests when method is not allowed', async () => {
      const cookie = cookiePair(setCookies(await get('/test1/status/200', { apikey: 'kong' }))[0]!);
      const res = await get('/test1/anything?session_logout=true', { cookie }, { method: 'GET' });
      expect([res.status, res.body.path]).toEqual([200, '/anything']);
    });

    it('storage kong: the cookie holds a handle; after logout the same cookie no longer authenticates (every data plane)', async () => {
      const cookie = cookiePair(setCookies(await get('/stored/status/200', { apikey: 'kong' }))[0]!);
      expect(cookie).toMatch(/^session=[A-Za-z0-9_-]{43}$/);
      for (const dp of topology.dataPlanes) expect((await proxied(url('/stored/status/200', dp.proxyUrl), { headers: { cookie } })).status).toBe(200);
      expect((await get('/stored/anything?session_logout=1', { cookie })).status).toBe(200);
      for (const dp of topology.dataPlanes) expect((await proxied(url('/stored/status/200', dp.proxyUrl), { headers: { cookie } })).status).toBe(403);
    });

    it('a session unused for longer than idling_timeout no longer authenticates', async () => {
      const cookie = cookiePair(setCookies(await get('/idle/status/200', { apikey: 'kong' }))[0]!);
      expect((await get('/idle/status/200', { cookie })).status).toBe(200);
      await eventually('the idle session to time out', () => get('/idle/status/200', { cookie }), (res) => res.status === 403, 8_000);
    });
  });

  it.each(['redirect', 'bot-detection', 'standard-webhooks', 'response-ratelimiting', 'session', 'acme'])('GET /schemas/plugins/%s answers its config fields', async (plugin) => {
    const res = await admin('GET', `/schemas/plugins/${plugin}`);
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).toContain('"config"');
    const root = await admin('GET', '/');
    expect(JSON.stringify(root.body.plugins)).toContain(plugin);
  });
});
