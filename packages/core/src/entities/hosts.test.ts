import { describe, expect, it } from '@jest/globals';
import { parseHostPort } from './hosts';
import { normalizeTarget } from './targets';

describe('targets as host:port', () => {
  it.each([
    ['a.example', 'a.example:8000'],
    ['A.Example:81', 'a.example:81'],
    ['10.0.0.1', '10.0.0.1:8000'],
    ['10.0.0.1:443', '10.0.0.1:443'],
    ['[::1]', '[::1]:8000'],
    ['[fd00::2]:9000', '[fd00::2]:9000'],
    ['::1', '[::1]:8000'],
    ['under_score.internal:1', 'under_score.internal:1'],
  ])('%s → %s', (input, stored) => {
    expect(normalizeTarget(input)).toBe(stored);
  });

  it.each(['', 'bad host', 'a.example:99999', 'a.example:', '[::1', '[zz::1]:80', 'a..b', '-a.example', '300.1.1.1'])('refuses %j', (input) => {
    expect(normalizeTarget(input)).toBeNull();
  });

  it('tells names from addresses', () => {
    expect(parseHostPort('10.0.0.1:80')).toEqual({ kind: 'ipv4', host: '10.0.0.1', port: 80 });
    expect(parseHostPort('svc.internal')).toEqual({ kind: 'name', host: 'svc.internal', port: null });
    expect(parseHostPort('[fe80::1]:8')).toEqual({ kind: 'ipv6', host: 'fe80::1', port: 8 });
  });
});
