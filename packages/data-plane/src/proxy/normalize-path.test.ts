import { describe, expect, it } from '@jest/globals';
import { needsWork, normalizeFully, normalizePath } from './normalize-path';

// RFC 3986 §5.4: the reference resolved against the base `http://a/b/c/d;p?q`. A relative path reference is merged
// with the base's directory (`/b/c/` + reference, §5.2.3) and then goes through remove_dot_segments (§5.2.4), which
// is what normalizePath does to a request path; the column holds that merged input and the RFC's resulting path.
const RFC_NORMAL: Array<[reference: string, merged: string, expected: string]> = [
  ['g', '/b/c/g', '/b/c/g'],
  ['./g', '/b/c/./g', '/b/c/g'],
  ['g/', '/b/c/g/', '/b/c/g/'],
  ['/g', '/g', '/g'],
  [';x', '/b/c/;x', '/b/c/;x'],
  ['g;x', '/b/c/g;x', '/b/c/g;x'],
  ['', '/b/c/d;p', '/b/c/d;p'],
  ['.', '/b/c/.', '/b/c/'],
  ['./', '/b/c/./', '/b/c/'],
  ['..', '/b/c/..', '/b/'],
  ['../', '/b/c/../', '/b/'],
  ['../g', '/b/c/../g', '/b/g'],
  ['../..', '/b/c/../..', '/'],
  ['../../', '/b/c/../../', '/'],
  ['../../g', '/b/c/../../g', '/g'],
];

const RFC_ABNORMAL: Array<[reference: string, merged: string, expected: string]> = [
  ['/./g', '/./g', '/g'],
  ['g.', '/b/c/g.', '/b/c/g.'],
  ['.g', '/b/c/.g', '/b/c/.g'],
  ['g..', '/b/c/g..', '/b/c/g..'],
  ['..g', '/b/c/..g', '/b/c/..g'],
  ['./../g', '/b/c/./../g', '/b/g'],
  ['./g/.', '/b/c/./g/.', '/b/c/g/'],
  ['g/./h', '/b/c/g/./h', '/b/c/g/h'],
  ['g/../h', '/b/c/g/../h', '/b/c/h'],
  ['g;x=1/./y', '/b/c/g;x=1/./y', '/b/c/g;x=1/y'],
  ['g;x=1/../y', '/b/c/g;x=1/../y', '/b/c/y'],
];

// RFC 3986 resolves these to `/g` by dropping the `..` that climbs above the root; the gateway refuses them (400).
const RFC_ABOVE_ROOT: Array<[reference: string, merged: string]> = [
  ['../../../g', '/b/c/../../../g'],
  ['../../../../g', '/b/c/../../../../g'],
  ['/../g', '/../g'],
];

// Every bypass form of the hardening issue, with /app/public open and /app/private protected.
const BYPASSES: Array<[path: string, expected: string | null]> = [
  ['/app/public/../private/secret', '/app/private/secret'],
  ['/app/public/%2e%2e/private/secret', '/app/private/secret'],
  ['/app/public/.%2e/private/secret', '/app/private/secret'],
  ['/app/public/%2e./private/secret', '/app/private/secret'],
  ['/app/public/%2E%2E/private/secret', '/app/private/secret'],
  ['/app/public/%2e/../private/secret', '/app/private/secret'],
  ['/app/public/..%2fprivate/secret', null],
  ['/app/public/..%2Fprivate/secret', null],
  ['/app/public/%2e%2e%2fprivate/secret', null],
  ['/app/public/..%5cprivate/secret', null],
  ['/app/public/..\\private/secret', null],
  ['/app/public/..;/private/secret', null],
  ['/app/public/.;/x', null],
  ['//app/private/secret', '/app/private/secret'],
  ['/app//private/secret', '/app/private/secret'],
  ['///app///private//secret', '/app/private/secret'],
  ['/./app/private/secret', '/app/private/secret'],
  ['/app/%70rivate/secret', '/app/private/secret'],
  ['/%61%70%70/%70%72%69%76%61%74%65/secret', '/app/private/secret'],
];

describe('normalizePath', () => {
  it.each(RFC_NORMAL)('RFC 3986 §5.4.1 %j: %s → %s', (_ref, merged, expected) => {
    expect(normalizePath(merged)).toBe(expected);
  });

  it.each(RFC_ABNORMAL)('RFC 3986 §5.4.2 %j: %s → %s', (_ref, merged, expected) => {
    expect(normalizePath(merged)).toBe(expected);
  });

  it.each(RFC_ABOVE_ROOT)('refuses a path climbing above / (RFC 3986 §5.4.2 %j: %s)', (_ref, merged) => {
    expect(normalizePath(merged)).toBeNull();
  });

  it('follows RFC 3986 §5.2.4\'s worked example', () => {
    expect(normalizePath('/a/b/c/./../../g')).toBe('/a/g');
  });

  it.each(BYPASSES)('bypass form %s → %s', (path, expected) => {
    expect(normalizePath(path)).toBe(expected);
  });

  it('decodes escapes of unreserved characters only, in either case of hex digit', () => {
    expect(normalizePath('/%7Euser/%41%2d%5F%2E')).toBe('/~user/A-_.');
    expect(normalizePath('/a%20b/%2F/%5C/%3F%23')).toBe('/a%20b/%2F/%5C/%3F%23');
    expect(normalizePath('/a%2fb')).toBe('/a%2fb');
  });

  it('keeps malformed escapes as sent', () => {
    expect(normalizePath('/a%zz/%4')).toBe('/a%zz/%4');
    expect(normalizePath('/a%')).toBe('/a%');
    expect(normalizePath('/%%41')).toBe('/%A');
  });

  it('keeps trailing slashes, merges runs of them and leaves the root alone', () => {
    expect(normalizePath('/')).toBe('/');
    expect(normalizePath('//')).toBe('/');
    expect(normalizePath('/a/')).toBe('/a/');
    expect(normalizePath('/a//')).toBe('/a/');
    expect(normalizePath('/a/..')).toBe('/');
    expect(normalizePath('/a/b/..')).toBe('/a/');
    expect(normalizePath('/a//../b')).toBe('/b');
    expect(normalizePath('/..')).toBeNull();
    expect(normalizePath('/a/../..')).toBeNull();
  });

  it('returns a path with nothing to do unchanged (the same string)', () => {
    for (const path of ['/app/public/file.txt', '/a.b/..c/c..', '/.well-known/x', '/a;b', '/']) expect(normalizePath(path)).toBe(path);
  });

  it('passes a plain path by the fast check, the leading slash included', () => {
    for (const path of ['/api/hello', '/', '/a/b/', '/.well-known/x', '/a;b', '/a..', 'a/b']) expect(needsWork(path)).toBe(false);
    for (const path of ['//a', '/a//b', '/./a', '/a/..', '/a/.', '/..;/a', '/.;x', '/%41', '/a\\b', '.', '../a']) expect(needsWork(path)).toBe(true);
  });

  it('gives, for any origin-form path the fast check passes, what the whole normalisation gives', () => {
    // paths of `/` and up to 8 pieces drawn from separators, dots, parameters, escapes and names, seeded for a stable run
    const pieces = ['/', '/', '.', '..', ';', 'a', 'b.', '%2f', '%5C', '%41', '\\', '//'];
    let seed = 12345;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let passed = 0;
    for (let i = 0; i < 20000; i++) {
      let path = '/';
      const count = 1 + next(8);
      for (let k = 0; k < count; k++) path += pieces[next(pieces.length)]!;
      if (needsWork(path)) continue;
      passed++;
      expect([path, normalizeFully(path)]).toEqual([path, path]);
    }
    expect(passed).toBeGreaterThan(1000);
  });
});
