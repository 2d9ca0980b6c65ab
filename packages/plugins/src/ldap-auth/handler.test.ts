import { describe, expect, it } from '@jest/globals';
import type { AuthResult, PluginContext } from '../contract';
import { BindCache } from './bind-cache';
import type { LdapBinder, LdapServer } from './connections';
import { bindDn, escapeDnValue, parseLdapAuthorization } from './credentials';
import { ldapAuthAuthenticate, LDAP_AUTH_RUNTIME, type LdapAuthRuntime } from './handler';
import { ldapAuth } from './index';
import { checkLdapAuthConfig, ldapAuthConfigSchema } from './schema';
import { unauthenticated } from '../../test/support/fake-context';

const ldapHeader = (user: string, password: string, scheme = 'ldap') => `${scheme} ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const baseConfig = { ldap_host: 'ldap.test', base_dn: 'ou=people,dc=example,dc=org', attribute: 'uid' };
const configOf = (extra: Record<string, unknown> = {}) => ldapAuthConfigSchema.parse({ ...baseConfig, ...extra });

/** A directory in memory standing in for the network in unit tests: DN → password; `down` makes every bind fail. */
class DirectoryDouble implements LdapBinder {
  binds: Array<{ server: LdapServer; dn: string }> = [];
  down = false;
  constructor(private readonly entries: Record<string, string>) {}
  bind(server: LdapServer, dn: string, password: string): Promise<boolean> {
    this.binds.push({ server, dn });
    if (this.down) return Promise.reject(new Error('connect ECONNREFUSED'));
    return Promise.resolve(this.entries[dn] === password);
  }
}

function setup(now = () => 1_000_000) {
  const directory = new DirectoryDouble({ 'uid=alice,ou=people,dc=example,dc=org': 'wonder:land' });
  const runtime: LdapAuthRuntime = { binder: directory, cache: new BindCache(100, now) };
  const run = (headers: Record<string, string>, config = configOf()) => {
    const removed: string[] = [];
    const ctx: PluginContext = {
      req: { method: 'GET', path: '/', headers, query: new URLSearchParams(), clientIp: '127.0.0.1', scheme: 'http', readBody: async () => Buffer.alloc(0) },
      upstream: { setHeader: () => undefined, removeHeader: (n) => void removed.push(n), removeQueryArg: () => undefined, setBody: () => undefined },
      ...unauthenticated(),
      index: undefined,
      runtime: { [LDAP_AUTH_RUNTIME]: runtime },
    };
    return { result: ldapAuthAuthenticate(ctx, config), removed };
  };
  return { directory, runtime, run };
}

const refusal = (result: AuthResult) => (result.ok ? null : result.response);
const aliceOk: AuthResult = { ok: true, consumer: null, credential: { id: null, identifier: 'alice', consumerId: null } };

describe('ldap-auth config', () => {
  it("fills Kong's defaults and requires ldap_host, base_dn and attribute", () => {
    expect(configOf()).toEqual({
      ...baseConfig,
      ldap_port: 389,
      ldaps: false,
      start_tls: false,
      verify_ldap_host: false,
      cache_ttl: 60,
      hide_credentials: false,
      timeout: 10000,
      keepalive: 60000,
      anonymous: null,
      header_type: 'ldap',
      realm: null,
    });
    for (const field of ['ldap_host', 'base_dn', 'attribute']) {
      const { [field]: _left, ...rest } = baseConfig as Record<string, string>;
      expect(ldapAuthConfigSchema.safeParse(rest).success).toBe(false);
    }
    expect(ldapAuthConfigSchema.safeParse({ ...baseConfig, ldap_port: 70000 }).success).toBe(false);
    expect(ldapAuthConfigSchema.safeParse({ ...baseConfig, ldap_host: 'ldap://x' }).success).toBe(false);
  });

  it('rejects ldaps together with start_tls', () => {
    expect(checkLdapAuthConfig(configOf({ ldaps: true, start_tls: true }))).toEqual({
      '@entity': ["failed conditional validation given value of field 'config.ldaps'"],
      start_tls: "'ldaps' and 'start_tls' cannot be enabled simultaneously",
    });
    expect(checkLdapAuthConfig(configOf({ ldaps: true }))).toBeNull();
    expect(checkLdapAuthConfig(configOf({ start_tls: true }))).toBeNull();
  });

  it('is an authentication plugin at priority 1200 that cannot be scoped to a consumer', () => {
    expect([ldapAuth.name, ldapAuth.priority, ldapAuth.auth, ldapAuth.noConsumer]).toEqual(['ldap-auth', 1200, true, true]);
  });
});

describe('ldap-auth header parsing', () => {
  it('reads `<header_type> base64(user:pass)` with the scheme in any case, splitting at the first colon', () => {
    expect(parseLdapAuthorization(ldapHeader('alice', 'a:b'), 'ldap')).toEqual({ username: 'alice', password: 'a:b' });
    expect(parseLdapAuthorization(ldapHeader('alice', 'pw', 'LDAP'), 'ldap')).toEqual({ username: 'alice', password: 'pw' });
    expect(parseLdapAuthorization(`  ${ldapHeader('alice', 'pw', 'Basic')}`, 'basic')).toEqual({ username: 'alice', password: 'pw' });
    expect(parseLdapAuthorization(ldapHeader('alice', 'pw', 'Basic'), 'ldap')).toBeNull();
    expect(parseLdapAuthorization('ldapx abc', 'ldap')).toBeNull();
    expect(parseLdapAuthorization(undefined, 'ldap')).toBeNull();
  });

  it('refuses an empty username or password (an empty password would be an unauthenticated bind)', () => {
    expect(parseLdapAuthorization(ldapHeader('alice', ''), 'ldap')).toBeNull();
    expect(parseLdapAuthorization(ldapHeader('', 'pw'), 'ldap')).toBeNull();
    expect(parseLdapAuthorization(`ldap ${Buffer.from('no-colon').toString('base64')}`, 'ldap')).toBeNull();
  });

  it('escapes the username inside the bind DN, so it cannot name another entry', () => {
    expect(bindDn('uid', 'alice', 'ou=people,dc=example,dc=org')).toBe('uid=alice,ou=people,dc=example,dc=org');
    expect(bindDn('uid', 'x,ou=admins', 'dc=example,dc=org')).toBe('uid=x\\,ou\\=admins,dc=example,dc=org');
    expect(escapeDnValue(' #a+b"<>;\\ ')).toBe('\\ #a\\+b\\"\\<\\>\\;\\\\\\ ');
    expect(escapeDnValue('#lead')).toBe('\\#lead');
  });
});

describe('ldap-auth authentication', () => {
  it('binds as <attribute>=<user>,<base_dn>; success identifies the credential, no consumer', async () => {
    const { directory, run } = setup();
    expect(await run({ authorization: ldapHeader('alice', 'wonder:land') }).result).toEqual(aliceOk);
    expect(directory.binds.map((b) => b.dn)).toEqual(['uid=alice,ou=people,dc=example,dc=org']);
    expect(directory.binds[0]!.server).toEqual({ host: 'ldap.test', port: 389, ldaps: false, startTls: false, verifyHost: false, timeout: 10000, keepalive: 60000 });
  });

  it('answers 401 Unauthorized with an LDAP challenge when no header is sent, without asking the server', async () => {
    const { directory, run } = setup();
    expect(refusal(await run({}).result)).toEqual({ status: 401, body: { message: 'Unauthorized' }, headers: { 'www-authenticate': 'LDAP' } });
    expect(refusal(await run({}, configOf({ realm: 'corp' })).result)?.headers).toEqual({ 'www-authenticate': 'LDAP realm="corp"' });
    expect(refusal(await run({}, configOf({ header_type: 'basic' })).result)?.headers).toEqual({ 'www-authenticate': 'basic' });
    expect(directory.binds).toEqual([]);
  });

  it('answers 401 "Invalid authentication credentials" for a wrong password, an unknown user or another scheme', async () => {
    const { run } = setup();
    const invalid = { status: 401, body: { message: 'Invalid authentication credentials' }, headers: { 'www-authenticate': 'LDAP' } };
    expect(refusal(await run({ authorization: ldapHeader('alice', 'nope') }).result)).toEqual(invalid);
    expect(refusal(await run({ authorization: ldapHeader('bob', 'wonder:land') }).result)).toEqual(invalid);
    expect(refusal(await run({ authorization: 'Bearer abc' }).result)).toEqual(invalid);
  });

  it('tries Proxy-Authorization first, then Authorization', async () => {
    const { directory, run } = setup();
    const good = ldapHeader('alice', 'wonder:land');
    expect(await run({ 'proxy-authorization': ldapHeader('alice', 'bad'), authorization: good }).result).toEqual(aliceOk);
    expect(directory.binds).toHaveLength(2);
    expect(await run({ 'proxy-authorization': good, authorization: 'Bearer x' }).result).toEqual(aliceOk);
  });

  it('hide_credentials removes both headers on success only', async () => {
    const { run } = setup();
    const hidden = run({ authorization: ldapHeader('alice', 'wonder:land') }, configOf({ hide_credentials: true }));
    await hidden.result;
    expect(hidden.removed).toEqual(['authorization', 'proxy-authorization']);
    const refused = run({ authorization: ldapHeader('alice', 'bad') }, configOf({ hide_credentials: true }));
    await refused.result;
    expect(refused.removed).toEqual([]);
  });

  it('a server that cannot be reached rejects (run-chain answers 500)', async () => {
    const { directory, run } = setup();
    directory.down = true;
    await expect(run({ authorization: ldapHeader('alice', 'wonder:land') }).result).rejects.toThrow('ECONNREFUSED');
  });
});

describe('ldap-auth bind cache', () => {
  it('answers a remembered bind synchronously, without the server, until cache_ttl has passed', async () => {
    let now = 1_000_000;
    const { directory, run } = setup(() => now);
    const headers = { authorization: ldapHeader('alice', 'wonder:land') };
    const first = run(headers, configOf({ cache_ttl: 30 })).result;
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toEqual(aliceOk);
    directory.down = true;
    const cached = run(headers, configOf({ cache_ttl: 30 })).result;
    expect(cached).not.toBeInstanceOf(Promise);
    expect(cached).toEqual(aliceOk);
    expect(directory.binds).toHaveLength(1);
    now += 30_001;
    await expect(run(headers, configOf({ cache_ttl: 30 })).result).rejects.toThrow('ECONNREFUSED');
  });

  it('never remembers a failure, remembers nothing with cache_ttl 0, and keys on server, naming and password', async () => {
    const { directory, runtime, run } = setup();
    await run({ authorization: ldapHeader('alice', 'bad') }).result;
    expect(runtime.cache.size).toBe(0);
    await run({ authorization: ldapHeader('alice', 'wonder:land') }, configOf({ cache_ttl: 0 })).result;
    expect(runtime.cache.size).toBe(0);
    await run({ authorization: ldapHeader('alice', 'wonder:land') }).result;
    expect(runtime.cache.size).toBe(1);
    directory.binds = [];
    // another password, host or base DN is not the remembered bind
    await run({ authorization: ldapHeader('alice', 'wonder:land2') }).result;
    await run({ authorization: ldapHeader('alice', 'wonder:land') }, configOf({ ldap_host: 'other.test' })).result;
    await run({ authorization: ldapHeader('alice', 'wonder:land') }, configOf({ base_dn: 'dc=example,dc=org' })).result;
    // nor is a bind made without checking the server's certificate, once the configuration asks for that check
    await run({ authorization: ldapHeader('alice', 'wonder:land') }, configOf({ verify_ldap_host: true })).result;
    expect(directory.binds).toHaveLength(4);
  });

  it('is bounded and keeps only digests', () => {
    const cache = new BindCache(2);
    cache.add('a', 60);
    cache.add('b', 60);
    cache.add('c', 60);
    expect([cache.has('a'), cache.has('b'), cache.has('c'), cache.size]).toEqual([false, true, true, 2]);
    const key = BindCache.keyOf({ host: 'h', port: 389, transport: 'ldap', baseDn: 'dc=x', attribute: 'uid', username: 'u', password: 'secret' });
    expect(key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(key).not.toBe(BindCache.keyOf({ host: 'h', port: 3890, transport: 'ldap', baseDn: 'dc=x', attribute: 'uid', username: 'u', password: 'secret' }));
  });
});
