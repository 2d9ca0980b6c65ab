import { describe, expect, it } from '@jest/globals';
import { isForbiddenTarget } from './request-target';

describe('request targets (decision 32)', () => {
  it.each(['/app\\private/secret', '/a b', '/a\tb', '/a\x00b', '/a\x1fb', '/a\x7fb', '/a?q=x\\y', '/a?q=x y'])('%j is refused', (target) => {
    expect(isForbiddenTarget(target)).toBe(true);
  });

  it.each(['/', '/app/private/secret', '/a%5Cb', '/a%20b', '/a?q=%5C&r=1', 'http://gw.test/a', '/caf\u00e9'])('%j is accepted', (target) => {
    expect(isForbiddenTarget(target)).toBe(false);
  });
});
