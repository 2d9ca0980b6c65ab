import { describe, expect, it } from '@jest/globals';
import { upstreamPath } from './upstream-path';

describe('upstream path (kong-reference 5.3)', () => {
  it('strip_path with no service path: the matched prefix goes, a leading slash stays', () => {
    expect(upstreamPath('/', '/foo/bar', '/foo', true, 'v0')).toBe('/bar');
    expect(upstreamPath('/', '/foo', '/foo', true, 'v0')).toBe('/');
    expect(upstreamPath('/', '/foobar', '/foo', true, 'v0')).toBe('/bar');
  });

  it('strip_path with a service path: the remainder is joined to it', () => {
    expect(upstreamPath('/s', '/foo/bar', '/foo', true, 'v0')).toBe('/s/bar');
    expect(upstreamPath('/s', '/foo', '/foo', true, 'v0')).toBe('/s');
    expect(upstreamPath('/s/', '/foo/bar', '/foo', true, 'v0')).toBe('/s/bar');
    expect(upstreamPath('/s/', '/foo', '/foo', true, 'v0')).toBe('/s/');
  });

  it('without strip_path: service path + full request path', () => {
    expect(upstreamPath('/', '/foo/bar', '/foo', false, 'v0')).toBe('/foo/bar');
    expect(upstreamPath('/s', '/foo/bar', '/foo', false, 'v0')).toBe('/s/foo/bar');
    expect(upstreamPath('/s/', '/foo/bar', '/foo', false, 'v0')).toBe('/s/foo/bar');
  });

  it('a route without paths strips nothing', () => {
    expect(upstreamPath('/s', '/any/thing', '', true, 'v0')).toBe('/s/any/thing');
  });

  it('regex paths strip what the regex matched', () => {
    expect(upstreamPath('/', '/users/42/orders', '/users/42', true, 'v0')).toBe('/orders');
  });

  it('v1 appends the remainder as it is', () => {
    expect(upstreamPath('/s', '/foobar', '/foo', true, 'v1')).toBe('/sbar');
    expect(upstreamPath('/s', '/foo/bar', '/foo', true, 'v1')).toBe('/s/bar');
    expect(upstreamPath('/s', '/foo', '/foo', true, 'v1')).toBe('/s');
    expect(upstreamPath('/', '/foobar', '/foo', true, 'v1')).toBe('/bar');
  });
});
