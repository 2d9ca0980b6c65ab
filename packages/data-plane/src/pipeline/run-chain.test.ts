import { describe, expect, it } from '@jest/globals';
import { z, type Consumer } from '@gatehouse/core';
import { findPlugin, type AuthResult, type PluginDefinition, type PluginResponse } from '@gatehouse/plugins';
import { makeConsumer, makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { compile } from '../compile/compile';
import { runChain, UNEXPECTED_ERROR, type ChainState } from './run-chain';

/**
 * Test authentication plugins: `<name>` accepts header `x-<name>: <username>` when that consumer exists; without the
 * header it refuses with 401 "<name> missing", with an unknown user 401 "<name> invalid". `calls` counts attempts.
 */
const calls: Record<string, number> = {};
function fakeAuth(name: string, priority: number, options: { async?: boolean } = {}): PluginDefinition {
  return {
    name,
    priority,
    version: '1',
    configSchema: z.object({ anonymous: z.string().nullable().default(null), run_on_preflight: z.boolean().default(true) }).strict(),
    auth: true,
    noConsumer: true,
    compile: (config) => new Map(config.consumers.map((c) => [c.username, c])),
    authenticate: (ctx, _config): AuthResult | Promise<AuthResult> => {
      calls[name] = (calls[name] ?? 0) + 1;
      const given = ctx.req.headers[`x-${name}`] as string | undefined;
      const consumer = given === undefined ? undefined : (ctx.index as Map<string, Consumer>).get(given);
      const result: AuthResult =
        given === undefined
          ? { ok: false, response: { status: 401, body: { message: `${name} missing` } } }
          : consumer === undefined
            ? { ok: false, response: { status: 401, body: { message: `${name} invalid` } } }
            : { ok: true, consumer, credential: { id: `${name}-cred`, identifier: `${name}:${given}`, consumerId: consumer.id } };
      return options.async ? new Promise((resolve) => setImmediate(() => resolve(result))) : result;
    },
  };
}

/** An oauth2-like plugin: its own endpoint `/token` answers 200 "token issued". */
const withEndpoint: PluginDefinition = {
  ...fakeAuth('tokens', 1400),
  endpoint: {
    matches: (ctx) => ctx.req.path === '/token',
    serve: () => ({ status: 200, body: { message: 'token issued' } }),
  },
};

const plugins = new Map<string, PluginDefinition>([
  ['alpha', fakeAuth('alpha', 1300)],
  ['beta', fakeAuth('beta', 1200)],
  ['slow', fakeAuth('slow', 1250, { async: true })],
  ['tokens', withEndpoint],
]);
const find = (name: string) => plugins.get(name) ?? findPlugin(name);

const service = makeService({ name: 'svc', url: 'http://upstream.test' });
const route = makeRoute({ paths: ['/'], service: { id: service.id } });
const alice = makeConsumer({ username: 'alice' });
const bob = makeConsumer({ username: 'bob' });
const anon = makeConsumer({ username: 'anonymous' });
const guest = makeConsumer({ username: 'guest' });

function chainOf(pluginRows: ReturnType<typeof makePlugin>[]) {
  const compiled = compile(makeSnapshot({ services: [service], routes: [route], consumers: [alice, bob, anon, guest], plugins: pluginRows }), { findPlugin: find });
  return { chain: compiled.routes[0]!.chain, consumers: compiled.consumers };
}

const onService = (name: string, config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  makePlugin({ name, service: { id: service.id }, config, ...extra });

function stateFor(headers: Record<string, string>, options: { method?: string; path?: string } = {}): ChainState & { removed: string[] } {
  const removed: string[] = [];
  return {
    req: { method: options.method ?? 'GET', path: options.path ?? '/', headers, query: new URLSearchParams(), clientIp: '10.0.0.1', scheme: 'http', readBody: async () => Buffer.alloc(0) },
    upstream: { setHeader: () => undefined, removeHeader: (n: string) => void removed.push(n), removeQueryArg: () => undefined, setBody: () => undefined },
    route,
    service,
    consumer: null,
    credential: null,
    anonymous: false,
    index: undefined,
    runtime: {},
    responseSteps: null,
    removed,
  };
}

const logged: Array<Record<string, unknown> | undefined> = [];
const log = { error: (_message: string, detail?: Record<string, unknown>) => void logged.push(detail) };

async function run(rows: ReturnType<typeof makePlugin>[], headers: Record<string, string>, options: { method?: string; path?: string } = {}) {
  const { chain, consumers } = chainOf(rows);
  const state = stateFor(headers, options);
  const outcome = await runChain(state, chain, consumers, log);
  return { outcome, state };
}

const message = (r: PluginResponse | null) => (r?.body as { message?: string } | undefined)?.message;

describe('run-chain: the interface document rules', () => {
  it('rule 1: mixed anonymous settings behave deterministically: a plugin without anonymous always demands its credential', async () => {
    // alpha (higher priority) with anonymous, beta without: beta is required whatever alpha did
    const rows = [onService('alpha', { anonymous: anon.id }), onService('beta')];
    const onlyBeta = await run(rows, { 'x-beta': 'bob' });
    expect(onlyBeta.outcome).toBeNull();
    expect(onlyBeta.state.consumer?.id).toBe(bob.id);
    expect(onlyBeta.state.anonymous).toBe(false);
    expect(message((await run(rows, { 'x-alpha': 'alice' })).outcome)).toBe('beta missing');
    expect(message((await run(rows, {})).outcome)).toBe('beta missing');

    // alpha without anonymous, beta with: alpha is required, beta is skipped once alpha authenticated
    const reversed = [onService('alpha'), onService('beta', { anonymous: anon.id })];
    calls.beta = 0;
    const onlyAlpha = await run(reversed, { 'x-alpha': 'alice' });
    expect(onlyAlpha.outcome).toBeNull();
    expect(onlyAlpha.state.consumer?.id).toBe(alice.id);
    expect(calls.beta).toBe(0);
    expect(message((await run(reversed, { 'x-beta': 'bob' })).outcome)).toBe('alpha missing');
  });

  it('rule 2: with AND every plugin must succeed and the last one executed sets the upstream credentials', async () => {
    const rows = [onService('beta'), onService('alpha')];
    const both = await run(rows, { 'x-alpha': 'alice', 'x-beta': 'bob' });
    expect(both.outcome).toBeNull();
    expect(both.state.consumer?.id).toBe(bob.id); // beta has the lower priority: it runs last
    expect(both.state.credential?.identifier).toBe('beta:bob');
    expect(both.state.anonymous).toBe(false);
    // the first failing plugin by priority answers
    expect(message((await run(rows, { 'x-beta': 'bob' })).outcome)).toBe('alpha missing');
    expect(message((await run(rows, { 'x-alpha': 'alice' })).outcome)).toBe('beta missing');
    expect(message((await run(rows, { 'x-alpha': 'nobody', 'x-beta': 'bob' })).outcome)).toBe('alpha invalid');
  });

  it('rule 3: with OR the first plugin that authenticates wins; if none does, the last plugin sets its anonymous consumer', async () => {
    const rows = [onService('alpha', { anonymous: guest.id }), onService('beta', { anonymous: anon.id })];
    calls.beta = 0;
    const both = await run(rows, { 'x-alpha': 'alice', 'x-beta': 'bob' });
    expect(both.state.consumer?.id).toBe(alice.id);
    expect(calls.beta).toBe(0); // skipped: already authenticated

    const onlyLower = await run(rows, { 'x-beta': 'bob' });
    expect(onlyLower.outcome).toBeNull();
    expect(onlyLower.state.consumer?.id).toBe(bob.id);
    expect(onlyLower.state.anonymous).toBe(false);
    expect(onlyLower.state.credential?.identifier).toBe('beta:bob');

    const none = await run(rows, {});
    expect(none.outcome).toBeNull();
    expect(none.state.consumer?.id).toBe(anon.id); // beta ran last: its anonymous consumer
    expect(none.state.credential).toBeNull();
    expect(none.state.anonymous).toBe(true);
  });

  it('rule 4: under AND, an auth plugin endpoint is answered only after the other plugins authenticated the request', async () => {
    const rows = [onService('tokens'), onService('beta')];
    const refused = await run(rows, {}, { path: '/token' });
    expect(message(refused.outcome)).toBe('beta missing');
    const served = await run(rows, { 'x-beta': 'bob' }, { path: '/token' });
    expect(served.outcome).toEqual({ status: 200, body: { message: 'token issued' } });
    // outside its endpoint the plugin authenticates as usual
    expect(message((await run(rows, { 'x-beta': 'bob' }, { path: '/other' })).outcome)).toBe('tokens missing');
  });

  it('rule 5: with OR, request-termination on the anonymous consumer forbids anonymous access only', async () => {
    const rows = [
      onService('alpha', { anonymous: anon.id }),
      onService('beta', { anonymous: anon.id }),
      makePlugin({ name: 'request-termination', consumer: { id: anon.id }, config: { status_code: 403, message: 'anonymous access forbidden' } }),
    ];
    const anonymous = await run(rows, {});
    expect(anonymous.outcome).toEqual({ status: 403, body: { message: 'anonymous access forbidden' } });
    const authenticated = await run(rows, { 'x-beta': 'bob' });
    expect(authenticated.outcome).toBeNull();
    expect(authenticated.state.consumer?.id).toBe(bob.id);
    // without the termination, unauthorised requests pass as anonymous
    expect((await run(rows.slice(0, 2), {})).outcome).toBeNull();
  });
});

describe('run-chain: anonymous access', () => {
  it('walkthrough: refused without anonymous; with it, anonymous requests pass as that consumer and valid ones as themselves', async () => {
    expect(message((await run([onService('alpha')], {})).outcome)).toBe('alpha missing');

    const withAnonymous = [onService('alpha', { anonymous: anon.id })];
    const anonymous = await run(withAnonymous, {});
    expect(anonymous.outcome).toBeNull();
    expect(anonymous.state).toMatchObject({ consumer: { id: anon.id }, credential: null, anonymous: true });
    const invalid = await run(withAnonymous, { 'x-alpha': 'nobody' });
    expect(invalid.state).toMatchObject({ consumer: { id: anon.id }, anonymous: true });
    const valid = await run(withAnonymous, { 'x-alpha': 'alice' });
    expect(valid.state).toMatchObject({ consumer: { id: alice.id }, anonymous: false });
  });

  it('accepts the anonymous consumer by username', async () => {
    const { state } = await run([onService('alpha', { anonymous: 'guest' })], {});
    expect(state.consumer?.id).toBe(guest.id);
    expect(state.anonymous).toBe(true);
  });

  it('a dangling anonymous id gives 500 only when authentication fails, and logs the plugin id', async () => {
    const dangling = onService('alpha', { anonymous: '0b9c6a4e-1111-4222-8333-444455556666' });
    const valid = await run([dangling], { 'x-alpha': 'alice' });
    expect(valid.outcome).toBeNull();
    expect(valid.state.consumer?.id).toBe(alice.id);

    logged.length = 0;
    const failed = await run([dangling], {});
    expect(failed.outcome).toBe(UNEXPECTED_ERROR);
    expect(failed.outcome).toEqual({ status: 500, body: { message: 'An unexpected error occurred' } });
    expect(logged[0]).toMatchObject({ plugin_id: dangling.id, plugin: 'alpha' });
  });

  it('a later plugin can replace the anonymous consumer an earlier one set', async () => {
    const rows = [onService('alpha', { anonymous: anon.id }), onService('beta', { anonymous: anon.id })];
    const { state } = await run(rows, { 'x-beta': 'bob' });
    expect(state).toMatchObject({ consumer: { id: bob.id }, anonymous: false });
  });
});

describe('run-chain: mechanics', () => {
  it('skips a plugin on OPTIONS when run_on_preflight is false', async () => {
    const rows = [onService('alpha', { run_on_preflight: false })];
    expect((await run(rows, {}, { method: 'OPTIONS' })).outcome).toBeNull();
    expect(message((await run(rows, {}, { method: 'GET' })).outcome)).toBe('alpha missing');
  });

  it('stays synchronous when every plugin is, and goes asynchronous only for a plugin returning a Promise', async () => {
    const sync = chainOf([onService('alpha'), onService('beta')]);
    const outcome = runChain(stateFor({ 'x-alpha': 'alice', 'x-beta': 'bob' }), sync.chain, sync.consumers, log);
    expect(outcome).toBeNull();

    const mixed = chainOf([onService('alpha'), onService('slow'), onService('beta')]);
    const state = stateFor({ 'x-alpha': 'alice', 'x-slow': 'alice', 'x-beta': 'bob' });
    const pending = runChain(state, mixed.chain, mixed.consumers, log);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toBeNull();
    expect(state.consumer?.id).toBe(bob.id);
    const refused = runChain(stateFor({ 'x-alpha': 'alice' }), mixed.chain, mixed.consumers, log);
    expect(message(await refused)).toBe('slow missing');
  });

  it('answers 500 when a plugin throws or rejects', async () => {
    plugins.set('broken', { ...fakeAuth('broken', 1000), authenticate: () => { throw new Error('boom'); } });
    plugins.set('rejecting', { ...fakeAuth('rejecting', 900), authenticate: () => Promise.reject(new Error('boom')) });
    expect((await run([onService('broken')], {})).outcome).toBe(UNEXPECTED_ERROR);
    expect((await run([onService('rejecting')], {})).outcome).toBe(UNEXPECTED_ERROR);
  });

  it('an authentication plugin answering null (a session plugin without a session) neither authenticates nor refuses, and its response hook is queued', async () => {
    plugins.set('quiet', { ...fakeAuth('quiet', 1900), authenticate: () => null, response: () => undefined });
    const { outcome, state } = await run([onService('quiet'), onService('beta', { anonymous: anon.id })], { 'x-beta': 'bob' });
    expect(outcome).toBeNull();
    expect(state.consumer?.id).toBe(bob.id);
    expect(state.responseSteps?.map((step) => step.plugin.name)).toEqual(['quiet']);
    expect((await run([onService('quiet')], {})).outcome).toBeNull();
  });

  it('resolves a consumer-scoped plugin for the consumer authentication chose', async () => {
    const rows = [
      onService('alpha'),
      makePlugin({ name: 'request-termination', config: { status_code: 418, message: 'not bob' }, consumer: { id: bob.id } }),
      makePlugin({ name: 'request-termination', config: { status_code: 451, message: 'everyone else' }, route: { id: route.id } }),
    ];
    expect((await run(rows, { 'x-alpha': 'bob' })).outcome?.status).toBe(418);
    expect((await run(rows, { 'x-alpha': 'alice' })).outcome?.status).toBe(451);
  });
});

describe("run-chain: Kong's rewrite phase", () => {
  /** a plugin recording `<phase>:<label>` per hook run, in `order`; `rewrite` answers 418 when the config says so */
  const order: string[] = [];
  const phased = (name: string, priority: number): PluginDefinition => ({
    name,
    priority,
    version: '1',
    configSchema: z.object({ label: z.string(), stop: z.boolean().default(false), slow: z.boolean().default(false) }).strict(),
    auth: false,
    noConsumer: false,
    rewrite: (_ctx, config) => {
      const { label, stop, slow } = config as { label: string; stop: boolean; slow: boolean };
      order.push(`rewrite:${label}`);
      const answer = stop ? { status: 418, body: { message: `stopped by ${label}` } } : undefined;
      return slow ? new Promise((resolve) => setImmediate(() => resolve(answer))) : answer;
    },
    access: (_ctx, config) => void order.push(`access:${(config as { label: string }).label}`),
    log: () => undefined,
  });
  plugins.set('early', phased('early', 500));
  plugins.set('late', phased('late', 100));

  const global = (name: string, config: Record<string, unknown>) => makePlugin({ name, config });
  const onRoute = (name: string, config: Record<string, unknown>) => makePlugin({ name, config, route: { id: route.id } });

  it("runs the global configurations' rewrite hooks first, by priority, whatever more specific configuration the route has", async () => {
    order.length = 0;
    const rows = [global('late', { label: 'late-global' }), onRoute('late', { label: 'late-route' }), global('early', { label: 'early-global' }), onService('alpha')];
    const { outcome } = await run(rows, { 'x-alpha': 'alice' });
    expect(outcome).toBeNull();
    expect(order).toEqual(['rewrite:early-global', 'rewrite:late-global', 'access:early-global', 'access:late-route']);
    expect(calls.alpha).toBeGreaterThan(0);
  });

  it('never runs the rewrite hook of a route-, service- or consumer-scoped configuration', async () => {
    order.length = 0;
    const rows = [onRoute('early', { label: 'route' }), makePlugin({ name: 'late', config: { label: 'service' }, service: { id: service.id } }), makePlugin({ name: 'late', config: { label: 'bob' }, consumer: { id: bob.id } }), onService('alpha')];
    expect((await run(rows, { 'x-alpha': 'bob' })).outcome).toBeNull();
    expect(order).toEqual(['access:route', 'access:bob']);
    const { chain } = chainOf(rows);
    expect(chain.filter((step) => step.rewrite)).toEqual([]);
  });

  it('a rewrite answer ends the request before any authentication runs, synchronously or not', async () => {
    for (const slow of [false, true]) {
      order.length = 0;
      calls.alpha = 0;
      const { outcome } = await run([global('early', { label: 'g', stop: true, slow }), onService('alpha')], {});
      expect(outcome).toEqual({ status: 418, body: { message: 'stopped by g' } });
      expect(order).toEqual(['rewrite:g']);
      expect(calls.alpha).toBe(0);
    }
  });

  it('a rewrite step is not a log step: the route logs through its own configuration once', () => {
    const compiled = compile(makeSnapshot({ services: [service], routes: [route], plugins: [global('early', { label: 'g' }), onRoute('early', { label: 'r' })] }), { findPlugin: find });
    const logChain = compiled.routes[0]!.logChain;
    expect(logChain.map((step) => [step.base?.config.label, step.rewrite])).toEqual([['r', false]]);
  });
});
