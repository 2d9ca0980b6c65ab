import { describe, expect, it } from '@jest/globals';
import type { Consumer } from '@gatehouse/core';
import { acmeAccess } from './acme/handler';
import { processChallenges } from './acme/challenges';
import { acmeConfigSchema, checkAcmeConfig, coversDomain } from './acme/schema';
import { isRefused } from './bot-detection/handler';
import { BUILT_IN_BOT_RULES } from './bot-detection/rules';
import { botDetectionConfigSchema } from './bot-detection/schema';
import { redirectLocation } from './redirect/handler';
import { redirectConfigSchema } from './redirect/schema';
import { LocalCounters } from './rate-limiting/local-counters';
import { RedisConnections } from './rate-limiting/redis-connections';
import { createResponseRateLimiter } from './response-ratelimiting/handler';
import { responseRateLimitingConfigSchema } from './response-ratelimiting/schema';
import { parseIncrements, UsageCounters } from './response-ratelimiting/usage';
import { cookieValue, setCookieLine } from './session/cookies';
import { buildSessionIndex, sessionAuthenticate, sessionResponse } from './session/handler';
import { needsRenewal } from './session/lifetime';
import { seal, unseal, type SessionPayload } from './session/sealed-cookie';
import { sessionConfigSchema } from './session/schema';
import { fakeContext, fakeResponse } from '../test/support/fake-context';
import { standardWebhooksAccess, webhookSignature } from './standard-webhooks/handler';
import { standardWebhooksConfigSchema } from './standard-webhooks/schema';

describe('redirect', () => {
  it('keeps the configured location, or puts the request path and query in it', () => {
    const config = redirectConfigSchema.parse({ location: 'https://example.com/some_path?foo=bar' });
    expect(redirectLocation(config, '/status/200', 'keep=this')).toBe('https://example.com/some_path?foo=bar');
    const keep = { ...config, keep_incoming_path: true };
    expect(redirectLocation(keep, '/status/200', 'keep=this')).toBe('https://example.com/status/200?keep=this');
    expect(redirectLocation(keep, '/a b', '')).toBe('https://example.com/a%20b');
  });
});

describe('bot-detection', () => {
  it('every built-in rule compiles on the linear-time engine, and Kong\'s examples are judged as Kong judges them', () => {
    expect(BUILT_IN_BOT_RULES).toHaveLength(14);
    const none = { allow: null, deny: null };
    expect(isRefused(none, 'Googlebot/2.1 (+http://www.google.com/bot.html)')).toBe(true);
    expect(isRefused(none, 'facebookexternalhit/1.1')).toBe(true);
    expect(isRefused(none, 'curl/7.43.0')).toBe(false);
    expect(isRefused(none, 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36')).toBe(false);
  });

  it('refuses patterns the linear-time engine cannot run', () => {
    const result = botDetectionConfigSchema.safeParse({ deny: ['(a)\\1'] });
    expect(result.success).toBe(false);
    expect(botDetectionConfigSchema.parse({}).allow).toEqual([]);
  });
});

describe('standard-webhooks', () => {
  const config = standardWebhooksConfigSchema.parse({ secret_v1: 'secret' });
  const now = 1_700_000_000_000;
  const request = (headers: Record<string, string>, body: string) => fakeContext({ method: 'POST', headers, body }).ctx;

  it('accepts the right signature within the tolerance and refuses the rest with 400', async () => {
    const ts = now / 1000 - 10;
    const signature = webhookSignature('secret', 'id1', ts, '{"a":1}');
    expect(await standardWebhooksAccess(request({ 'webhook-id': 'id1', 'webhook-timestamp': String(ts), 'webhook-signature': signature }, '{"a":1}'), config, now)).toBeUndefined();
    const late = now / 1000 - 301;
    const lateSig = webhookSignature('secret', 'id1', late, '{"a":1}');
    expect(await standardWebhooksAccess(request({ 'webhook-id': 'id1', 'webhook-timestamp': String(late), 'webhook-signature': lateSig }, '{"a":1}'), config, now)).toMatchObject({ status: 400 });
    expect(await standardWebhooksAccess(request({ 'webhook-id': 'id1', 'webhook-timestamp': String(ts), 'webhook-signature': signature }, '{"a":2}'), config, now)).toMatchObject({ status: 400 });
  });
});

describe('response-ratelimiting', () => {
  const config = responseRateLimitingConfigSchema.parse({ limits: { video: { minute: 2 }, image: { minute: 5 } } });

  it('reads the usage the upstream declares, over several lines, for configured limits only', () => {
    expect([...parseIncrements('video=1, image = 2, other=3, bad', config)]).toEqual([
      ['video', 1],
      ['image', 2],
    ]);
    expect([...parseIncrements(['video=2', 'image=x'], config)]).toEqual([['video', 2]]);
  });

  it('tells the upstream and the client what is left, counts at the end, and turns a spending response into a 429', async () => {
    const limiter = createResponseRateLimiter(new UsageCounters(new LocalCounters(), new RedisConnections()), () => 1_700_000_000_000);
    const exchange = async (usage: string) => {
      const { ctx, recorded } = fakeContext();
      expect(await limiter.access(ctx, config)).toBeUndefined();
      const res = fakeResponse(200, { 'x-kong-limit': usage }, 'body');
      limiter.response(ctx, config, res);
      await limiter.log(ctx, config);
      return { recorded, res };
    };
    const first = await exchange('video=2');
    expect(first.recorded.headers.get('x-ratelimit-remaining-video')).toBe('2');
    expect(first.res.headers['x-ratelimit-remaining-video-minute']).toBe('0');
    expect(first.res.headers['x-kong-limit']).toBeUndefined();
    const second = await exchange('video=1');
    expect([second.res.status, second.res.finish().toString()]).toEqual([429, '']);
    expect(second.res.headers['x-ratelimit-remaining-image-minute']).toBe('5');
  });

  it('refuses limit names that cannot go into a header name', () => {
    expect(responseRateLimitingConfigSchema.safeParse({ limits: { 'vid eo': { minute: 1 } } }).success).toBe(false);
    expect(responseRateLimitingConfigSchema.safeParse({ limits: { 'video.hd': { minute: 1 } } }).success).toBe(true);
  });

  it('blocks before proxying with block_on_first_violation', async () => {
    const strict = responseRateLimitingConfigSchema.parse({ limits: { video: { minute: 1 } }, block_on_first_violation: true });
    const limiter = createResponseRateLimiter(new UsageCounters(new LocalCounters(), new RedisConnections()));
    const { ctx } = fakeContext();
    await limiter.access(ctx, strict);
    limiter.response(ctx, strict, fakeResponse(200, { 'x-kong-limit': 'video=1' }));
    await limiter.log(ctx, strict);
    expect(await limiter.access(fakeContext().ctx, strict)).toEqual({ status: 429, body: { message: "API rate limit exceeded for 'video'" } });
  });
});

describe('session', () => {
  const config = sessionConfigSchema.parse({ secret: 's3cret', cookie_secure: false });
  const consumer: Consumer = { id: 'c1', username: 'coop', custom_id: null, tags: null, created_at: 0, updated_at: 0 };
  const index = buildSessionIndex({ consumers: [consumer] });
  const payload: SessionPayload = { id: 'x', aud: 'default', sub: 'coop', data: ['c1', 'k1', null], created: 100, renewed: 100, used: 100 };

  it('seals and opens a payload; another secret or cookie name opens nothing', () => {
    const sealed = seal(payload, 's3cret', 'session');
    expect(unseal(sealed, 's3cret', 'session')).toEqual(payload);
    expect(unseal(sealed, 'other', 'session')).toBeNull();
    expect(unseal(sealed, 's3cret', 'remember')).toBeNull();
    expect(unseal(`${sealed.slice(0, -2)}AA`, 's3cret', 'session')).toBeNull();
  });

  it('finds its cookie among others and writes Kong\'s attributes', () => {
    expect(cookieValue('a=1; session=abc; b=2', 'session')).toBe('abc');
    expect(setCookieLine({ ...config, cookie_same_site: 'Lax' }, 'session', 'v', null)).toBe('session=v; Path=/; SameSite=Lax; HttpOnly');
  });

  it('refuses cookie names and attributes that would break the Set-Cookie header', () => {
    expect(sessionConfigSchema.safeParse({ cookie_name: 'a b' }).success).toBe(false);
    expect(sessionConfigSchema.safeParse({ cookie_path: '/x\r\nSet-Cookie: y=1' }).success).toBe(false);
    expect(sessionConfigSchema.safeParse({ cookie_domain: 'a.test; Secure' }).success).toBe(false);
    // a location is stored as parsed: tabs and newlines are gone before it can reach a header
    expect(redirectConfigSchema.parse({ location: 'https://example.com/a\nb' }).location).toBe('https://example.com/ab');
  });

  it('renews once a tenth of the shorter timeout has passed', () => {
    const timeouts = { idling: 900, rolling: 3600, absolute: 86400 };
    expect(needsRenewal(payload, timeouts, 189)).toBe(false);
    expect(needsRenewal(payload, timeouts, 190)).toBe(true);
  });

  it('opens a session after another plugin authenticated, then authenticates with the cookie alone', async () => {
    const login = fakeContext();
    const ctx = { ...login.ctx, index, consumer, credential: { id: 'k1', identifier: 'k1', consumerId: 'c1' } };
    expect(sessionAuthenticate(ctx, config)).toBeNull();
    const res = fakeResponse(200, {});
    sessionResponse(ctx, config, res);
    const line = (res.headers['set-cookie'] as string[])[0]!;
    const later = { ...fakeContext({ headers: { cookie: line.split('; ')[0]! } }).ctx, index };
    expect(await sessionAuthenticate(later, config)).toEqual({ ok: true, consumer, credential: { id: 'k1', identifier: 'k1', consumerId: 'c1' } });
    const logout = { ...fakeContext({ method: 'DELETE', query: 'session_logout=1', headers: { cookie: line.split('; ')[0]! } }).ctx, index };
    expect(await sessionAuthenticate(logout, config)).toMatchObject({ ok: false, response: { status: 200, setCookies: [expect.stringMatching(/^session=; Path=\/.*Max-Age=0$/)] } });
  });
});

describe('acme', () => {
  it("requires Let's Encrypt's terms to be accepted, as Kong", () => {
    expect(checkAcmeConfig(acmeConfigSchema.parse({}))).toEqual({ '@entity': ['terms of service must be accepted, see https://letsencrypt.org/repository/'] });
    expect(checkAcmeConfig(acmeConfigSchema.parse({ tos_accepted: true }))).toBeNull();
    expect(checkAcmeConfig(acmeConfigSchema.parse({ api_uri: 'https://ca.internal/dir' }))).toBeNull();
  });

  it('covers listed domains, one-level wildcards, or any domain', () => {
    const config = { domains: ['a.test', '*.b.test'], allow_any_domain: false };
    expect(['a.test', 'x.b.test', 'x.y.b.test', 'b.test', 'c.test'].map((h) => coversDomain(config, h))).toEqual([true, true, false, false, false]);
    expect(coversDomain({ domains: null, allow_any_domain: true }, 'c.test')).toBe(true);
  });

  it('answers a pending challenge with its key authorization, others with 404, and passes other paths', async () => {
    const config = acmeConfigSchema.parse({ domains: ['a.test'], tos_accepted: true });
    await processChallenges.put('tok1', 'tok1.thumb', 60_000);
    const ask = (path: string) => acmeAccess(fakeContext({ path, headers: { host: 'a.test:80' } }).ctx, config);
    expect(await ask('/.well-known/acme-challenge/tok1')).toEqual({ status: 200, body: 'tok1.thumb', headers: { 'content-type': 'text/plain' } });
    expect(await ask('/.well-known/acme-challenge/x')).toEqual({ status: 404, body: 'Not found\n' });
    expect(await ask('/elsewhere')).toBeUndefined();
    await processChallenges.delete('tok1');
  });
});
