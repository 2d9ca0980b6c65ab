import { describe, expect, it } from '@jest/globals';
import type { Route } from '@gatehouse/core';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { compile } from './compile';

const service = makeService({ name: 'svc', url: 'http://upstream.test' });

function routerOf(routes: Route[]) {
  return compile(makeSnapshot({ services: [service], routes })).router;
}

function matchName(routes: Route[], request: { method?: string; host?: string; path: string; headers?: Record<string, string> }) {
  const match = routerOf(routes).match(request.method ?? 'GET', request.host, request.path, request.headers ?? {});
  return match ? { name: match.route.route.name, matched: match.matched } : null;
}

const route = (name: string, fields: Record<string, unknown>) => makeRoute({ name, service: { id: service.id }, ...fields });

describe('router', () => {
  it('treats plain paths as raw string prefixes, not segments', () => {
    const routes = [route('foo', { paths: ['/foo'] })];
    expect(matchName(routes, { path: '/foo' })?.name).toBe('foo');
    expect(matchName(routes, { path: '/foo/bar' })?.name).toBe('foo');
    expect(matchName(routes, { path: '/foobar' })?.name).toBe('foo');
    expect(matchName(routes, { path: '/fo' })).toBeNull();
    expect(matchName(routes, { path: '/bar/foo' })).toBeNull();
  });

  it('prefers the longest matching prefix', () => {
    const routes = [route('short', { paths: ['/a'] }), route('long', { paths: ['/a/b/c'] }), route('mid', { paths: ['/a/b'] })];
    expect(matchName(routes, { path: '/a/b/c/d' })?.name).toBe('long');
    expect(matchName(routes, { path: '/a/b/x' })?.name).toBe('mid');
    expect(matchName(routes, { path: '/a/x' })?.name).toBe('short');
  });

  it('prefers routes matching on more kinds of attributes (host+path beats a longer path alone)', () => {
    const routes = [route('path-only', { paths: ['/api/v1/users'] }), route('host-and-path', { hosts: ['example.com'], paths: ['/api'] })];
    expect(matchName(routes, { host: 'example.com', path: '/api/v1/users' })?.name).toBe('host-and-path');
    expect(matchName(routes, { host: 'other.com', path: '/api/v1/users' })?.name).toBe('path-only');
  });

  it('prefers method+path over path alone', () => {
    const routes = [route('any', { paths: ['/x'] }), route('post', { paths: ['/x'], methods: ['POST'] })];
    expect(matchName(routes, { method: 'POST', path: '/x' })?.name).toBe('post');
    expect(matchName(routes, { method: 'GET', path: '/x' })?.name).toBe('any');
  });

  it('matches methods exactly', () => {
    const routes = [route('get', { methods: ['GET', 'HEAD'] })];
    expect(matchName(routes, { method: 'HEAD', path: '/' })?.name).toBe('get');
    expect(matchName(routes, { method: 'POST', path: '/' })).toBeNull();
  });

  it('prefers plain hosts over wildcard hosts', () => {
    const routes = [route('wild', { hosts: ['*.example.com'] }), route('plain', { hosts: ['api.example.com'] })];
    expect(matchName(routes, { host: 'api.example.com', path: '/' })?.name).toBe('plain');
    expect(matchName(routes, { host: 'www.example.com', path: '/' })?.name).toBe('wild');
  });

  it('matches prefix and suffix wildcards, any port, case-insensitively', () => {
    const routes = [route('suffix', { hosts: ['*.example.com'] }), route('prefix', { hosts: ['example.*'] })];
    expect(matchName(routes, { host: 'A.B.Example.com:8000', path: '/' })?.name).toBe('suffix');
    expect(matchName(routes, { host: 'example.org', path: '/' })?.name).toBe('prefix');
    expect(matchName(routes, { host: 'example.com', path: '/' })?.name).toBe('prefix');
    expect(matchName(routes, { host: 'notexample.org', path: '/' })).toBeNull();
  });

  it('matches a host with a port only on that port, and a host without a port on any', () => {
    const routes = [route('with-port', { hosts: ['a.test:8443'] }), route('any-port', { hosts: ['b.test'] })];
    expect(matchName(routes, { host: 'a.test:8443', path: '/' })?.name).toBe('with-port');
    expect(matchName(routes, { host: 'a.test:8000', path: '/' })).toBeNull();
    expect(matchName(routes, { host: 'b.test:1234', path: '/' })?.name).toBe('any-port');
  });

  it('needs a Host header for a host route', () => {
    expect(matchName([route('h', { hosts: ['a.test'] })], { path: '/' })).toBeNull();
  });

  it('tries regex paths before prefix paths, anchored at the start', () => {
    const routes = [route('prefix', { paths: ['/users/profile'] }), route('regex', { paths: ['~/users/\\d+'] })];
    expect(matchName(routes, { path: '/users/42/x' })).toEqual({ name: 'regex', matched: '/users/42' });
    expect(matchName(routes, { path: '/users/profile' })?.name).toBe('prefix');
    expect(matchName(routes, { path: '/x/users/42' })).toBeNull();
  });

  it('orders regex paths by regex_priority', () => {
    const routes = [route('low', { paths: ['~/items/.*'], regex_priority: 1 }), route('high', { paths: ['~/items/\\d+'], regex_priority: 5 })];
    expect(matchName(routes, { path: '/items/7' })?.name).toBe('high');
    expect(matchName(routes, { path: '/items/abc' })?.name).toBe('low');
  });

  it('prefers more header conditions, and matches header values case-insensitively', () => {
    const routes = [
      route('one', { paths: ['/h'], headers: { 'x-version': ['v1', 'v2'] } }),
      route('two', { paths: ['/h'], headers: { 'x-version': ['v1'], 'x-tenant': ['acme'] } }),
    ];
    expect(matchName(routes, { path: '/h', headers: { 'x-version': 'V1', 'x-tenant': 'acme' } })?.name).toBe('two');
    expect(matchName(routes, { path: '/h', headers: { 'x-version': 'v2' } })?.name).toBe('one');
    expect(matchName(routes, { path: '/h', headers: { 'x-version': 'v3' } })).toBeNull();
  });

  it('breaks remaining ties by the older route, whatever the snapshot order', () => {
    const older = route('older', { paths: ['/same'] });
    const newer = route('newer', { paths: ['/same'] });
    expect(matchName([newer, older], { path: '/same' })?.name).toBe('older');
    expect(matchName([older, newer], { path: '/same' })?.name).toBe('older');
  });

  it('gives each path of a route its own place in the order', () => {
    const routes = [route('multi', { paths: ['/a', '/b/c/d'] }), route('mid', { paths: ['/b/c'] })];
    expect(matchName(routes, { path: '/b/c/d/e' })).toEqual({ name: 'multi', matched: '/b/c/d' });
    expect(matchName(routes, { path: '/b/c/x' })?.name).toBe('mid');
  });

  it('leaves out routes of a disabled service', () => {
    const disabled = makeService({ name: 'off', url: 'http://off.test', enabled: false });
    const snapshot = makeSnapshot({ services: [disabled], routes: [makeRoute({ paths: ['/off'], service: { id: disabled.id } })] });
    expect(compile(snapshot).router.match('GET', undefined, '/off', {})).toBeNull();
  });
});
