import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { compile } from '../compile/compile';
import { SniStore } from './sni-store';
import { VaultReferenceError, VaultResolver } from './vault-resolver';

let dir: string;
let pem: { cert: string; key: string };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-unit-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-subj', '/CN=unit.test', '-days', '2'], { stdio: 'ignore' });
  pem = { cert: readFileSync(join(dir, 'c.pem'), 'utf8'), key: readFileSync(join(dir, 'k.pem'), 'utf8') };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SniStore', () => {
  it('looks up the exact name, then *.suffix (one label), then prefix.*, else null', () => {
    const [exact, suffix, prefix] = [1, 2, 3].map(() => createSecureContext({ cert: pem.cert, key: pem.key }));
    const store = SniStore.from([
      ['api.example.test', exact!],
      ['*.example.test', suffix!],
      ['api.example.*', prefix!],
    ]);
    expect(store.lookup('API.Example.Test')).toBe(exact);
    expect(store.lookup('www.example.test')).toBe(suffix);
    expect(store.lookup('api.example.org')).toBe(prefix);
    expect(store.lookup('a.b.example.test')).toBeNull();
    expect(store.lookup('other.test')).toBeNull();
  });
});

describe('VaultResolver (env vault)', () => {
  const env = { MY_SECRET: 's3cret', GH_DB_PASS: 'prefixed', JSON_SECRET: '{"user":"u1","pass":"p1"}' };
  const resolver = new VaultResolver([{ id: 'v', prefix: 'my-env', name: 'env', config: { prefix: 'GH_' } }], env);

  it('resolves env references, with a vault entity\'s prefix, and keys of JSON values; plain values pass through', () => {
    expect(resolver.resolve('{vault://env/my-secret}')).toBe('s3cret');
    expect(resolver.resolve('{vault://my-env/db-pass}')).toBe('prefixed');
    expect(resolver.resolve('{vault://env/json-secret/pass}')).toBe('p1');
    expect(resolver.resolve('plain')).toBe('plain');
  });

  it('refuses unknown vaults and missing variables', () => {
    expect(() => resolver.resolve('{vault://env/absent}')).toThrow(VaultReferenceError);
    expect(() => resolver.resolve('{vault://nope/my-secret}')).toThrow(/no vault with prefix 'nope'/);
  });
});

describe('compile: TLS and vault references', () => {
  const service = makeService({ name: 's', url: 'https://upstream.test:8443', tls_verify: true, tls_verify_depth: 1 });
  const route = makeRoute({ paths: ['/'], service: { id: service.id } });

  it('resolves referenceable plugin fields from the environment given, and reports what it cannot resolve', () => {
    const plugin = makePlugin({
      name: 'rate-limiting',
      config: { minute: 5, policy: 'redis', redis: { host: 'redis.test', password: '{vault://env/rl-pass}', username: '{vault://env/rl-missing}' } },
    });
    const compiled = compile(makeSnapshot({ services: [service], routes: [route], plugins: [plugin] }), { env: { RL_PASS: 'from-env' } });
    const step = compiled.routes[0]!.chain.find((s) => s.plugin.name === 'rate-limiting')!;
    expect((step.base!.config.redis as { password?: unknown }).password).toBe('from-env');
    expect(compiled.warnings.some((w) => w.plugin_id === plugin.id && /config\.redis\.username/.test(w.message))).toBe(true);
    // the snapshot itself is untouched: the reference is what stays stored
    expect((plugin.config as { redis: { password: string } }).redis.password).toBe('{vault://env/rl-pass}');
  });

  it('builds the SNI store from certificates (vault references included) and leaves out what it cannot load', () => {
    const config = {
      services: [service],
      routes: [route],
      certificates: [
        { id: 'c1', cert: pem.cert, key: pem.key, cert_alt: null, key_alt: null },
        { id: 'c2', cert: '{vault://env/unit-cert}', key: '{vault://env/unit-key}', cert_alt: null, key_alt: null },
        { id: 'c3', cert: '{vault://env/absent-cert}', key: pem.key, cert_alt: null, key_alt: null },
      ],
      snis: [
        { id: 's1', name: 'one.test', certificate: { id: 'c1' } },
        { id: 's2', name: '*.two.test', certificate: { id: 'c2' } },
        { id: 's3', name: 'three.test', certificate: { id: 'c3' } },
      ],
    };
    const compiled = compile(makeSnapshot(config), { env: { UNIT_CERT: pem.cert, UNIT_KEY: pem.key } });
    expect(compiled.tls.sni.lookup('one.test')).not.toBeNull();
    expect(compiled.tls.sni.lookup('x.two.test')).not.toBeNull();
    expect(compiled.tls.sni.lookup('three.test')).toBeNull();
    expect(compiled.tls.problems).toEqual([{ entity: 'certificates', id: 'c3', message: expect.stringContaining('ABSENT_CERT') }]);
    const target = compiled.routes[0]!.upstream!;
    expect(target.tls!.options).toMatchObject({ rejectUnauthorized: true, servername: 'upstream.test' });
    expect(typeof target.tls!.options.checkServerIdentity).toBe('function');
  });
});
