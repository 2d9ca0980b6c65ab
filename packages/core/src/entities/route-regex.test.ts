import { describe, expect, it } from '@jest/globals';
import { routeSchema } from './routes';
import { compileLinearRegex, linearRegexError } from './route-regex';

function pathErrors(paths: string[]): unknown {
  const result = routeSchema.safeParse({ paths });
  if (result.success) return null;
  return result.error.issues.map((issue) => ({ path: issue.path, message: issue.message }));
}

describe('route regexes (decision 17)', () => {
  it('accepts patterns the linear-time engine runs, a nested quantifier included', () => {
    for (const path of ['~/redos/(a+)+$', '~/users/\\d+', '~/items/(?<id>[^/]+)$', '~/(?i)case', '/plain/((']) expect(pathErrors([path])).toBeNull();
  });

  it('refuses backreferences and lookaround in paths[], naming the element', () => {
    for (const path of ['~/(a)\\1', '~/x(?=y)', '~/x(?!y)', '~/(?<=a)b', '~/(?<!a)b', '~/x((']) {
      const errors = pathErrors(['/ok', path]) as Array<{ path: unknown[]; message: string }>;
      expect(errors).toHaveLength(1);
      expect(errors[0]!.path).toEqual(['paths', 1]);
      expect(errors[0]!.message).toMatch(/^invalid regex: '/);
    }
    expect(linearRegexError('/(a)\\1')).toContain('no backreferences or lookaround');
  });

  it('refuses the same in header value regexes (~*), naming the header', () => {
    const result = routeSchema.safeParse({ headers: { 'x-version': ['v1', '~*(?=v)v2'] } });
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path)).toEqual([['headers', 'x-version', 1]]);
    expect(routeSchema.safeParse({ headers: { 'x-version': ['~*^v\\d+$'] } }).success).toBe(true);
  });

  it('matches a catastrophic-backtracking pattern against a long input and answers (RE2 semantics)', () => {
    const regex = compileLinearRegex('/redos/(a+)+$', { anchored: true });
    expect(regex.exec(`/redos/${'a'.repeat(50_000)}!`)).toBeNull();
    expect(regex.exec('/redos/aaa')).toBe('/redos/aaa');
    expect(regex.exec('/x/redos/aaa')).toBeNull();
  });

  it('anchors route paths at the start and returns the matched text; header patterns match anywhere, case-insensitively', () => {
    expect(compileLinearRegex('/users/\\d+', { anchored: true }).exec('/users/42/profile')).toBe('/users/42');
    const header = compileLinearRegex('^v\\d', { caseInsensitive: true });
    expect([header.test('V2'), header.test('xv2')]).toEqual([true, false]);
    expect(compileLinearRegex('beta', { caseInsensitive: true }).test('x-BETA-y')).toBe(true);
  });
});
