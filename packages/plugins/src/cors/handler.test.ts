import { describe, expect, it } from '@jest/globals';
import { fakeContext } from '../../test/support/fake-context';
import type { UpstreamResponse } from '../contract';
import { corsAccess, corsResponse, normalizeOrigin } from './handler';
import { cors } from './index';
import { corsConfigSchema } from './schema';

const run = (config: Record<string, unknown>, request: Parameters<typeof fakeContext>[0]) => {
  const { ctx, recorded } = fakeContext(request);
  const parsed = corsConfigSchema.parse(config);
  const answer = corsAccess(ctx, parsed);
  return { answer, headers: Object.fromEntries(recorded.response), ctx, parsed, recorded };
};

/** The upstream's response as the data plane hands it to response hooks: plugin-set headers replace the upstream's. */
function upstreamResponse(own: Record<string, string | string[]>, set: Map<string, string>): UpstreamResponse {
  const headers: Record<string, string | string[]> = {};
  const replaced: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(own)) (set.has(name) ? replaced : headers)[name] = value;
  for (const [name, value] of set) headers[name] = value;
  return { status: 200, headers, setByPlugins: new Set(set.keys()), replaced, transformBody: () => undefined, captureBody: () => undefined };
}

const preflight = (origin: string, extra: Record<string, string> = {}) => ({ method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET', ...extra } });

describe('cors', () => {
  it("Kong's name, priority 2000, no consumer scope, defaults", () => {
    expect([cors.name, cors.priority, cors.noConsumer, cors.auth]).toEqual(['cors', 2000, true, false]);
    expect(corsConfigSchema.parse({})).toEqual({
      origins: null,
      headers: null,
      exposed_headers: null,
      methods: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT'],
      max_age: null,
      credentials: false,
      private_network: false,
      preflight_continue: false,
    });
    expect(corsConfigSchema.safeParse({ methods: ['FETCH'] }).success).toBe(false);
    expect(corsConfigSchema.safeParse({ origins: ['(x'] }).success).toBe(false);
  });

  it('answers a preflight with 200 and the allowed origin, methods, headers and max age', () => {
    const { answer, headers } = run({ origins: ['http://a.test'], methods: ['GET'], headers: ['X-A'], max_age: 5 }, preflight('http://a.test'));
    expect(answer).toEqual({ status: 200, body: null });
    expect(headers).toEqual({
      'access-control-allow-origin': 'http://a.test',
      vary: 'Origin',
      'access-control-allow-methods': 'GET',
      'access-control-allow-headers': 'X-A',
      'access-control-max-age': '5',
    });
  });

  it('preflight_continue lets the preflight through without any CORS header', () => {
    const { answer, headers } = run({ preflight_continue: true }, preflight('http://a.test'));
    expect(answer).toBeUndefined();
    expect(headers).toEqual({});
  });

  it('an OPTIONS without Access-Control-Request-Method is not a preflight', () => {
    const { answer, headers } = run({ exposed_headers: ['X-E'] }, { method: 'OPTIONS', headers: { origin: 'http://a.test' } });
    expect(answer).toBeUndefined();
    expect(headers['access-control-expose-headers']).toBe('X-E');
    expect(headers['access-control-allow-methods']).toBeUndefined();
  });

  it('exact origins are compared normalised (default ports, case) and sent back normalised; regexes are anchored', () => {
    const config = { origins: ['https://A.test:443', 'http://[a-z]+\\.b\\.test:8080'] };
    const allowed = (origin: string, c: Record<string, unknown> = config) => run(c, { headers: { origin } }).headers['access-control-allow-origin'];
    expect(allowed('https://a.test:443')).toBe('https://a.test');
    expect(allowed('http://x.b.test:8080')).toBe('http://x.b.test:8080');
    expect(allowed('http://x.b.test:8080.evil')).toBeUndefined();
    expect(allowed('http://a.test')).toBeUndefined();
    // Kong's anchors: a leading ^ and a trailing $ are the user's own
    expect(allowed('http://foo.test:90', { origins: ['^http://(.*[.])?foo\\.test(:(80|90))?$'] })).toBe('http://foo.test:90');
    expect(normalizeOrigin('HTTP://Example.test:80/')).toEqual({ domain: 'http://example.test', host: 'example.test' });
    expect(normalizeOrigin('example.test')).toEqual({ domain: 'example.test', host: 'example.test' });
  });

  it("a regex without ':' is matched against the origin's host only (Kong's by_host)", () => {
    const config = { origins: ['(.*[./])?example\\.org'] };
    const allowed = (origin: string) => run(config, { headers: { origin } }).headers['access-control-allow-origin'];
    expect(allowed('http://example.org:8080')).toBe('http://example.org:8080');
    expect(allowed('https://api.example.org')).toBe('https://api.example.org');
    expect(allowed('http://example.org:80')).toBe('http://example.org');
    expect(allowed('http://example.org.evil.test')).toBeUndefined();
    expect(allowed('http://evilexample.org')).toBeUndefined();
    // with a ':' the scheme and port are part of what is matched
    expect(run({ origins: ['(.*[./])?example\\.org:8000'] }, { headers: { origin: 'http://example.org' } }).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a single non-regex origin is always sent back as configured; `*` among several origins answers `*`', () => {
    for (const origin of ['http://evil.test', 'https://bar.test:1234']) {
      expect(run({ origins: ['https://bar.test:1234'] }, { headers: { origin } }).headers).toEqual({ vary: 'Origin', 'access-control-allow-origin': 'https://bar.test:1234' });
    }
    expect(run({ origins: ['foo.test'] }, { headers: {} }).headers['access-control-allow-origin']).toBe('foo.test');
    expect(run({ origins: ['foo.bar', '*'] }, { headers: { origin: 'http://www.example.net' } }).headers['access-control-allow-origin']).toBe('*');
    // several literal origins without a scheme never match a browser's origin
    expect(run({ origins: ['foo.test', 'bar.test'] }, { headers: { origin: 'http://foo.test' } }).headers['access-control-allow-origin']).toBeUndefined();
  });

  it("the upstream's Vary is kept with Origin added; its Access-Control-Allow-Origin is removed when the origin is refused", () => {
    const allowedRun = run({ origins: ['http://a.test', 'http://b.test'] }, { headers: { origin: 'http://a.test' } });
    const allowedRes = upstreamResponse({ vary: 'Accept-Encoding', 'access-control-allow-origin': '*' }, allowedRun.recorded.response);
    corsResponse(allowedRun.ctx, allowedRun.parsed, allowedRes);
    expect([allowedRes.headers.vary, allowedRes.headers['access-control-allow-origin']]).toEqual([['Accept-Encoding', 'Origin'], 'http://a.test']);

    const refused = run({ origins: ['http://a.test', 'http://b.test'], credentials: true }, { headers: { origin: 'http://c.test' } });
    expect(refused.headers).toEqual({ vary: 'Origin', 'access-control-allow-credentials': 'true' });
    const refusedRes = upstreamResponse({ 'access-control-allow-origin': '*', 'x-other': '1' }, refused.recorded.response);
    corsResponse(refused.ctx, refused.parsed, refusedRes);
    expect(refusedRes.headers).toEqual({ vary: 'Origin', 'access-control-allow-credentials': 'true', 'x-other': '1' });

    // a preflight sent on to the upstream (preflight_continue) keeps the upstream's headers as they are
    const continued = run({ origins: ['http://a.test', 'http://b.test'], preflight_continue: true }, preflight('http://c.test'));
    const continuedRes = upstreamResponse({ 'access-control-allow-origin': '*' }, continued.recorded.response);
    corsResponse(continued.ctx, continued.parsed, continuedRes);
    expect(continuedRes.headers).toEqual({ 'access-control-allow-origin': '*' });
  });

  it('credentials: Allow-Credentials, and the request origin instead of `*`', () => {
    const { headers } = run({ credentials: true }, { headers: { origin: 'http://c.test' } });
    expect(headers).toEqual({ 'access-control-allow-origin': 'http://c.test', vary: 'Origin', 'access-control-allow-credentials': 'true' });
    // without an Origin there is nothing to send back: `*`, and no credentials
    expect(run({ credentials: true }, { headers: {} }).headers).toEqual({ 'access-control-allow-origin': '*' });
  });

  it('private_network answers only when the preflight asks for it', () => {
    expect(run({ private_network: true }, preflight('http://a.test', { 'access-control-request-private-network': 'true' })).headers['access-control-allow-private-network']).toBe('true');
    expect(run({ private_network: true }, preflight('http://a.test')).headers['access-control-allow-private-network']).toBeUndefined();
    expect(run({}, preflight('http://a.test', { 'access-control-request-private-network': 'true' })).headers['access-control-allow-private-network']).toBeUndefined();
  });
});
