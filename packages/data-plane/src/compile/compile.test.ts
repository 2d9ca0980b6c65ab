import { describe, expect, it } from '@jest/globals';
import { z } from '@gatehouse/core';
import { findPlugin, type PluginDefinition } from '@gatehouse/plugins';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { compile, SnapshotCompileError } from './compile';
import { scopeRank } from './scope';

const service = makeService({ name: 'svc', url: 'http://upstream.test' });
const otherService = makeService({ name: 'other', url: 'http://other.test' });
const route = makeRoute({ name: 'r', paths: ['/r'], service: { id: service.id } });
const otherRoute = makeRoute({ name: 'o', paths: ['/o'], service: { id: otherService.id } });
const alice = makeConsumer({ username: 'alice' });
const bob = makeConsumer({ username: 'bob', custom_id: 'b-1' });

/** A consumer-scopable plugin whose config carries a label, to see which configuration won. */
const labelled: PluginDefinition = {
  name: 'labelled',
  priority: 10,
  version: '1',
  configSchema: z.object({ label: z.string() }).strict(),
  auth: false,
  noConsumer: false,
  access: () => undefined,
};
const find = (name: string) => (name === 'labelled' ? labelled : findPlugin(name));

function stepFor(plugins: ReturnType<typeof makePlugin>[], routeName = 'r') {
  const compiled = compile(makeSnapshot({ services: [service, otherService], routes: [route, otherRoute], consumers: [alice, bob], plugins }), { findPlugin: find });
  const compiledRoute = compiled.routes.find((r) => r.route.name === routeName)!;
  return compiledRoute.chain.find((s) => s.plugin.name === 'labelled');
}

const labelledPlugin = (label: string, scope: Record<string, unknown>) => makePlugin({ name: 'labelled', config: { label }, ...scope });

describe('scope resolution', () => {
  it('ranks the eight scopes as Kong does', () => {
    const r = { id: 'r' };
    const s = { id: 's' };
    const c = { id: 'c' };
    const ranks = [
      scopeRank({ route: r, service: s, consumer: c }),
      scopeRank({ route: r, service: null, consumer: c }),
      scopeRank({ route: null, service: s, consumer: c }),
      scopeRank({ route: r, service: s, consumer: null }),
      scopeRank({ route: null, service: null, consumer: c }),
      scopeRank({ route: r, service: null, consumer: null }),
      scopeRank({ route: null, service: s, consumer: null }),
      scopeRank({ route: null, service: null, consumer: null }),
    ];
    expect(ranks).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
  });

  it('picks the most specific configuration without a consumer: route > service > global', () => {
    const global = labelledPlugin('global', {});
    const onService = labelledPlugin('service', { service: { id: service.id } });
    const onRoute = labelledPlugin('route', { route: { id: route.id } });
    expect(stepFor([global])!.base!.config.label).toBe('global');
    expect(stepFor([global, onService])!.base!.config.label).toBe('service');
    expect(stepFor([global, onService, onRoute])!.base!.config.label).toBe('route');
    expect(stepFor([onRoute, labelledPlugin('route+service', { route: { id: route.id }, service: { id: service.id } })])!.base!.config.label).toBe('route+service');
  });

  it('applies service and route configurations only to their own routes', () => {
    const onService = labelledPlugin('service', { service: { id: service.id } });
    const onRoute = labelledPlugin('route', { route: { id: route.id } });
    expect(stepFor([onService, onRoute], 'o')).toBeUndefined();
    expect(stepFor([onService, onRoute, labelledPlugin('global', {})], 'o')!.base!.config.label).toBe('global');
  });

  it('keeps per-consumer candidates, most specific first: route+service+consumer > route+consumer > service+consumer > consumer', () => {
    const step = stepFor([
      labelledPlugin('global', {}),
      labelledPlugin('alice', { consumer: { id: alice.id } }),
      labelledPlugin('alice+service', { consumer: { id: alice.id }, service: { id: service.id } }),
      labelledPlugin('alice+route', { consumer: { id: alice.id }, route: { id: route.id } }),
      labelledPlugin('bob', { consumer: { id: bob.id } }),
      labelledPlugin('bob+service', { consumer: { id: bob.id }, service: { id: service.id } }),
    ])!;
    expect(step.base!.config.label).toBe('global');
    expect(step.byConsumer!.get(alice.id)!.config.label).toBe('alice+route');
    expect(step.byConsumer!.get(bob.id)!.config.label).toBe('bob+service');
    const full = stepFor([
      labelledPlugin('alice+route', { consumer: { id: alice.id }, route: { id: route.id } }),
      labelledPlugin('alice+route+service', { consumer: { id: alice.id }, route: { id: route.id }, service: { id: service.id } }),
    ])!;
    expect(full.byConsumer!.get(alice.id)!.config.label).toBe('alice+route+service');
    expect(full.base).toBeNull();
  });

  it('lets a consumer configuration beat a route+service one', () => {
    const step = stepFor([
      labelledPlugin('route+service', { route: { id: route.id }, service: { id: service.id } }),
      labelledPlugin('alice', { consumer: { id: alice.id } }),
    ])!;
    expect(step.base!.config.label).toBe('route+service');
    expect(step.byConsumer!.get(alice.id)!.config.label).toBe('alice');
  });

  it('ignores disabled configurations, which do not shadow less specific ones', () => {
    const step = stepFor([
      labelledPlugin('global', {}),
      makePlugin({ name: 'labelled', config: { label: 'route-off' }, route: { id: route.id }, enabled: false }),
      makePlugin({ name: 'labelled', config: { label: 'alice-off' }, consumer: { id: alice.id }, enabled: false }),
    ])!;
    expect(step.base!.config.label).toBe('global');
    expect(step.byConsumer).toBeNull();
    expect(stepFor([makePlugin({ name: 'labelled', config: { label: 'off' }, enabled: false })])).toBeUndefined();
  });
});

describe('compile', () => {
  const snapshotWith = (plugins: ReturnType<typeof makePlugin>[], extra: Record<string, unknown> = {}) =>
    makeSnapshot({ services: [service], routes: [route], consumers: [alice, bob], plugins, ...extra });

  it('sorts a route chain by priority, highest first, name breaking ties', () => {
    const plugins = [
      makePlugin({ name: 'request-termination', service: { id: service.id }, config: {} }),
      makePlugin({ name: 'basic-auth', service: { id: service.id }, config: {} }),
      makePlugin({ name: 'key-auth', service: { id: service.id }, config: {} }),
    ];
    const chain = compile(snapshotWith(plugins)).routes[0]!.chain;
    expect(chain.map((s) => s.plugin.name)).toEqual(['key-auth', 'basic-auth', 'request-termination']);
  });

  it('fills each plugin config with its defaults once', () => {
    const compiled = compile(snapshotWith([makePlugin({ name: 'key-auth', service: { id: service.id }, config: { key_names: ['token'] } })]));
    expect(compiled.routes[0]!.chain[0]!.base!.config).toEqual({
      key_names: ['token'],
      hide_credentials: false,
      anonymous: null,
      key_in_header: true,
      key_in_query: true,
      key_in_body: false,
      run_on_preflight: true,
      realm: null,
    });
  });

  it('builds the plugin indexes and the consumer directory', () => {
    const cred = makeCredential(alice, { key: 'alice-key' });
    const compiled = compile(
      snapshotWith([makePlugin({ name: 'key-auth', config: {} })], { credentials: { keyauth_credentials: [cred] } }),
    );
    const index = compiled.indexes.get('key-auth') as { byKey: Map<string, { result: { consumer: { id: string } } }> };
    expect(index.byKey.get('alice-key')!.result.consumer.id).toBe(alice.id);
    expect(compiled.routes[0]!.chain[0]!.index).toBe(index);
    expect(compiled.consumers.byId.get(bob.id)).toBe(bob);
    expect(compiled.consumers.byUsername.get('bob')).toBe(bob);
    expect(compiled.version).toBe(1);
    expect(compiled.hash).toMatch(/^[0-9a-f]{32}$/);
  });

  it('rejects an unknown plugin name', () => {
    expect(() => compile(snapshotWith([makePlugin({ name: 'no-such-plugin', config: {} })]))).toThrow(SnapshotCompileError);
    expect(() => compile(snapshotWith([makePlugin({ name: 'no-such-plugin', config: {} })]))).toThrow(/unknown plugin 'no-such-plugin'/);
  });

  it('rejects a config failing its plugin schema, even when disabled', () => {
    const bad = makePlugin({ name: 'key-auth', config: { key_names: ['bad name!'] }, enabled: false });
    expect(() => compile(snapshotWith([bad]))).toThrow(/invalid config \(key_names\.0: bad header name 'bad name!'/);
    expect(() => compile(snapshotWith([makePlugin({ name: 'key-auth', config: { nope: 1 } })]))).toThrow(SnapshotCompileError);
  });

  it("rejects a config failing the plugin's cross-field checks", () => {
    const bad = makePlugin({ name: 'request-termination', config: { message: 'x', body: 'y' } });
    expect(() => compile(snapshotWith([bad]))).toThrow(/message cannot be used with content_type or body/);
  });

  it('rejects an authentication plugin scoped to a consumer', () => {
    expect(() => compile(snapshotWith([makePlugin({ name: 'key-auth', consumer: { id: alice.id }, config: {} })]))).toThrow(/cannot be scoped to a consumer/);
  });

  it('rejects a route whose service is missing and an invalid regex path', () => {
    const orphan = makeRoute({ paths: ['/x'], service: { id: otherService.id } });
    expect(() => compile(makeSnapshot({ services: [service], routes: [orphan] }))).toThrow(/references missing service/);
    // the admin API refuses such paths; a snapshot holding one anyway does not load
    for (const path of ['~/x((', '~/(a)\\1', '~/(?=a)b']) {
      const badRegex = { ...makeRoute({ paths: ['/x'], service: { id: service.id } }), paths: [path] };
      expect(() => compile(makeSnapshot({ services: [service], routes: [badRegex] }))).toThrow(SnapshotCompileError);
    }
  });

  it('warns about an anonymous consumer that does not exist, by id or username', () => {
    const dangling = makePlugin({ name: 'key-auth', config: { anonymous: '6f1c2a9e-0000-4000-8000-000000000000' } });
    const byName = makePlugin({ name: 'basic-auth', config: { anonymous: 'bob' } });
    const compiled = compile(snapshotWith([dangling, byName]));
    expect(compiled.warnings).toEqual([
      { plugin_id: dangling.id, plugin: 'key-auth', message: "config.anonymous '6f1c2a9e-0000-4000-8000-000000000000' does not reference an existing consumer" },
    ]);
  });

  it('precomputes the upstream target of each route', () => {
    const s = makeService({ url: 'https://api.test:8443/base', read_timeout: 1234 });
    const r = makeRoute({ paths: ['/x'], service: { id: s.id }, strip_path: false, preserve_host: true });
    const compiled = compile(makeSnapshot({ services: [s], routes: [r] }));
    expect(compiled.routes[0]).toMatchObject({
      stripPath: false,
      preserveHost: true,
      upstream: { origin: 'https://api.test:8443', hostHeader: 'api.test:8443', basePath: '/base', readTimeout: 1234, protocol: 'https' },
    });
    const plain = compile(makeSnapshot({ services: [service], routes: [route] })).routes[0]!.upstream!;
    expect(plain).toMatchObject({ origin: 'http://upstream.test:80', hostHeader: 'upstream.test', basePath: '/' });
  });
});
