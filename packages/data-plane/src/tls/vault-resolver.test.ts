import { describe, expect, it } from '@jest/globals';
import { resolveConfigReferences, VaultResolver } from './vault-resolver';

describe('resolveConfigReferences', () => {
  const resolver = new VaultResolver([], { PRIMARY_KEY: 'one', SPARE_KEY: 'two' });

  it('resolves `*` paths in every element of a list and leaves the stored config as it was', () => {
    const config = { auth: { header_value: '{vault://env/primary-key}' }, fallbacks: [{ auth: { header_value: '{vault://env/spare-key}' } }, { auth: null }, { auth: { header_value: 'plain' } }] };
    const errors: string[] = [];
    const out = resolveConfigReferences(config, ['auth.header_value', 'fallbacks.*.auth.header_value'], resolver, (path) => errors.push(path));
    expect(out).toEqual({ auth: { header_value: 'one' }, fallbacks: [{ auth: { header_value: 'two' } }, { auth: null }, { auth: { header_value: 'plain' } }] });
    expect(config.fallbacks[0]!.auth!.header_value).toBe('{vault://env/spare-key}');
    expect(errors).toEqual([]);
  });

  it('reports the concrete path of a reference it cannot resolve', () => {
    const errors: string[] = [];
    resolveConfigReferences({ fallbacks: [{ auth: { header_value: '{vault://env/missing}' } }] }, ['fallbacks.*.auth.header_value'], resolver, (path) => errors.push(path));
    expect(errors).toEqual(['fallbacks.0.auth.header_value']);
  });
});
