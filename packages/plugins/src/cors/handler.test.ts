import { describe, expect, it } from '@jest/globals';
import { fakeContext } from '../shared/fake-context';
import { corsAccess, normalizeOrigin } from './handler';
import { cors } from './index';
import { corsConfigSchema } from './schema';

const run = (config: Record<string, unknown>, request: Parameters<typeof fakeContext>[0]) => {
  const { ctx, recorded } = fakeContext(request);
  const answer = corsAccess(ctx, corsConfigSchema.parse(config));
  return { answer, headers: Object.fromEntries(recorded.response) };
};

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

  it('preflight_continue lets the preflight through with the headers set', () => {
    const { answer, headers } = run({ preflight_continue: true }, preflight('http://a.test'));
    expect(answer).toBeUndefined();
    expect(headers['access-control-allow-origin']).toBe('*');
  });

  it('an OPTIONS without Access-Control-Request-Method is not a preflight', () => {
    const { answer, headers } = run({ exposed_headers: ['X-E'] }, { method: 'OPTIONS', headers: { origin: 'http://a.test' } });
    expect(answer).toBeUndefined();
    expect(headers['access-control-expose-headers']).toBe('X-E');
    expect(headers['access-control-allow-methods']).toBeUndefined();
  });

  it('exact origins are compared normalised (default ports, case); regexes match the whole origin', () => {
    const config = { origins: ['https://A.test:443', 'http://[a-z]+\\.b\\.test:8080'] };
    expect(run(config, { headers: { origin: 'https://a.test' } }).headers['access-control-allow-origin']).toBe('https://a.test');
    expect(run(config, { headers: { origin: 'http://x.b.test:8080' } }).headers['access-control-allow-origin']).toBe('http://x.b.test:8080');
    expect(run(config, { headers: { origin: 'http://x.b.test:8080.evil' } }).headers['access-control-allow-origin']).toBeUndefined();
    expect(run(config, { headers: { origin: 'http://a.test' } }).headers['access-control-allow-origin']).toBeUndefined();
    expect(normalizeOrigin('HTTP://Example.test:80/')).toBe('http://example.test');
  });

  it('credentials: Allow-Credentials, and the request origin instead of `*`', () => {
    const { headers } = run({ credentials: true }, { headers: { origin: 'http://c.test' } });
    expect(headers).toEqual({ 'access-control-allow-origin': 'http://c.test', vary: 'Origin', 'access-control-allow-credentials': 'true' });
  });

  it('private_network answers only when the preflight asks for it', () => {
    expect(run({ private_network: true }, preflight('http://a.test', { 'access-control-request-private-network': 'true' })).headers['access-control-allow-private-network']).toBe('true');
    expect(run({ private_network: true }, preflight('http://a.test')).headers['access-control-allow-private-network']).toBeUndefined();
    expect(run({}, preflight('http://a.test', { 'access-control-request-private-network': 'true' })).headers['access-control-allow-private-network']).toBeUndefined();
  });
});
