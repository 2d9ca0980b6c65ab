import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Plugin } from '@gatehouse/core';
import { BindCache, LDAP_AUTH_RUNTIME, LdapConnections, type LdapAuthRuntime, type LdapServer } from '@gatehouse/plugins';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot, startEchoUpstream, startLdapServer, type EchoUpstream, type LdapServerHandle } from '@gatehouse/testkit';
import { compile, ConfigHolder, createDataPlaneServer, SnapshotCompileError, type DataPlaneServer } from '../src';
import { closedPort, send, type SendOptions } from './harness';

const ldap = (user: string, password: string, scheme = 'ldap') => `${scheme} ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const IDENTITY_HEADERS = ['x-consumer-id', 'x-consumer-username', 'x-consumer-custom-id', 'x-anonymous-consumer'];

/**
 * ldap-auth (priority 1200) through the real proxy against real OpenLDAP servers (slapd started by the test on free
 * ports): a success identifies the LDAP user as the credential and no consumer.
 */
describe('ldap-auth through the proxy', () => {
  let directory: LdapServerHandle;
  let echo: EchoUpstream;
  let dp: DataPlaneServer;
  let runtime: LdapAuthRuntime;
  let connections: LdapConnections;
  const logged: Array<{ message: string; detail?: Record<string, unknown> }> = [];
  const anonymous = makeConsumer({ username: 'anonymous', custom_id: 'anon-1' });
  const keyUser = makeConsumer({ username: 'key-user' });
  let service: ReturnType<typeof makeService>;
  let route: ReturnType<typeof makeRoute>;

  const ldapConfig = (extra: Record<string, unknown> = {}) => ({
    ldap_host: directory.host,
    ldap_port: directory.port,
    base_dn: directory.baseDn,
    attribute: directory.attribute,
    ...extra,
  });
  const ldapPlugin = (extra: Record<string, unknown> = {}) => makePlugin({ name: 'ldap-auth', service: { id: service.id }, config: ldapConfig(extra) });
  const snapshotWith = (plugins: Plugin[]) =>
    makeSnapshot({
      services: [service],
      routes: [route],
      consumers: [anonymous, keyUser],
      plugins,
      credentials: { keyauth_credentials: [makeCredential(keyUser, { key: 'the-key' })] },
    });
  const load = (plugins: Plugin[]) => void dp.holder.swap(compile(snapshotWith(plugins)));
  const call = (options: SendOptions = {}) => send(dp.port, '/api', options);
  const upstreamHeaders = async (headers: Record<string, string>) => {
    const reply = await call({ headers });
    expect(reply.status).toBe(200);
    return reply.json.headers as Record<string, string>;
  };

  beforeAll(async () => {
    directory = await startLdapServer({
      users: [
        { name: 'alice', password: 'wonder:land' },
        { name: 'bob', password: 'builder' },
      ],
      tls: true,
    });
    echo = await startEchoUpstream();
    service = makeService({ name: 'api', url: echo.url });
    route = makeRoute({ paths: ['/api'], service: { id: service.id } });
    connections = new LdapConnections();
    runtime = { binder: connections, cache: new BindCache() };
    dp = await createDataPlaneServer({
      holder: new ConfigHolder(),
      listen: { host: '127.0.0.1', port: 0 },
      runtime: { [LDAP_AUTH_RUNTIME]: runtime },
      log: { error: (message, detail) => void logged.push({ message, detail }), warn: () => undefined },
    });
  });

  afterEach(() => {
    runtime.cache.clear();
    logged.length = 0;
  });

  afterAll(async () => {
    await dp?.close();
    connections?.close();
    await echo?.close();
    await directory?.stop();
  });

  it('a valid bind is forwarded with x-credential-identifier and no consumer headers', async () => {
    load([ldapPlugin()]);
    const headers = await upstreamHeaders({ authorization: ldap('alice', 'wonder:land'), 'x-consumer-id': 'spoofed', 'x-anonymous-consumer': 'true' });
    expect(headers['x-credential-identifier']).toBe('alice');
    for (const name of IDENTITY_HEADERS) expect(headers[name]).toBeUndefined();
    // Kong's default keeps the credentials upstream; the scheme is matched in any case
    expect(headers.authorization).toBe(ldap('alice', 'wonder:land'));
    expect((await upstreamHeaders({ authorization: ldap('bob', 'builder', 'LDAP') }))['x-credential-identifier']).toBe('bob');
    expect((await upstreamHeaders({ 'proxy-authorization': ldap('bob', 'builder') }))['x-credential-identifier']).toBe('bob');
  });

  it('a wrong password or an unknown user: 401 "Invalid authentication credentials" with the LDAP challenge', async () => {
    load([ldapPlugin()]);
    for (const authorization of [ldap('alice', 'wrong'), ldap('mallory', 'wonder:land'), ldap('alice,ou=people', 'wonder:land'), 'Basic abc']) {
      const reply = await call({ headers: { authorization } });
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual({ message: 'Invalid authentication credentials' });
      expect(reply.headers['www-authenticate']).toBe('LDAP');
    }
  });

  it('no header: 401 "Unauthorized" with the LDAP challenge (realm when configured)', async () => {
    load([ldapPlugin()]);
    const reply = await call();
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ message: 'Unauthorized' });
    expect(reply.headers['www-authenticate']).toBe('LDAP');
    load([ldapPlugin({ realm: 'corp' })]);
    expect((await call()).headers['www-authenticate']).toBe('LDAP realm="corp"');
  });

  it('anonymous: failed or missing credentials fall back to the anonymous consumer; valid ones still identify no consumer', async () => {
    load([ldapPlugin({ anonymous: anonymous.id })]);
    for (const headers of [{}, { authorization: ldap('alice', 'wrong') }] as Array<Record<string, string>>) {
      const fallback = await upstreamHeaders({ ...headers, 'x-credential-identifier': 'spoofed' });
      expect(fallback).toMatchObject({ 'x-consumer-id': anonymous.id, 'x-consumer-username': 'anonymous', 'x-consumer-custom-id': 'anon-1', 'x-anonymous-consumer': 'true' });
      expect(fallback['x-credential-identifier']).toBeUndefined();
    }
    const valid = await upstreamHeaders({ authorization: ldap('alice', 'wonder:land') });
    expect(valid['x-credential-identifier']).toBe('alice');
    for (const name of IDENTITY_HEADERS) expect(valid[name]).toBeUndefined();
  });

  it('hide_credentials keeps Authorization and Proxy-Authorization from the upstream', async () => {
    load([ldapPlugin({ hide_credentials: true })]);
    const headers = await upstreamHeaders({ authorization: ldap('alice', 'wonder:land'), 'proxy-authorization': ldap('bob', 'builder') });
    expect(headers.authorization).toBeUndefined();
    expect(headers['proxy-authorization']).toBeUndefined();
    expect(headers['x-credential-identifier']).toBe('bob');
  });

  it('AND with key-auth: both must pass; ldap-auth runs last, so only its credential reaches the upstream', async () => {
    load([makePlugin({ name: 'key-auth', service: { id: service.id }, config: {} }), ldapPlugin()]);
    expect((await call({ headers: { apikey: 'the-key' } })).status).toBe(401);
    expect((await call({ headers: { authorization: ldap('alice', 'wonder:land') } })).status).toBe(403);
    const both = await upstreamHeaders({ apikey: 'the-key', authorization: ldap('alice', 'wonder:land') });
    expect(both['x-credential-identifier']).toBe('alice');
    expect(both['x-consumer-id']).toBeUndefined();
  });

  it('acl after ldap-auth: a credential without a consumer is refused with 403', async () => {
    load([ldapPlugin(), makePlugin({ name: 'acl', service: { id: service.id }, config: { allow: ['staff'] } })]);
    const reply = await call({ headers: { authorization: ldap('alice', 'wonder:land') } });
    expect(reply.status).toBe(403);
    expect(reply.json).toEqual({ message: 'You cannot consume this service' });
    expect((await call()).status).toBe(401);
  });

  it('an unreachable LDAP server: 500 "An unexpected error occurred", logged, even with anonymous set', async () => {
    const port = await closedPort();
    for (const extra of [{}, { anonymous: anonymous.id }]) {
      load([ldapPlugin({ ldap_port: port, timeout: 2000, ...extra })]);
      const reply = await call({ headers: { authorization: ldap('alice', 'wonder:land') } });
      expect(reply.status).toBe(500);
      expect(reply.json).toEqual({ message: 'An unexpected error occurred' });
    }
    expect(logged).toHaveLength(2);
    expect(logged[0]!.detail).toMatchObject({ plugin: 'ldap-auth', error: expect.stringContaining('ECONNREFUSED') });
  });

  it('keeps the connection for the next bind (keepalive), and closes it at once with keepalive 0', async () => {
    const server = (keepalive: number): LdapServer => ({ host: directory.host, port: directory.port, ldaps: false, startTls: false, verifyHost: false, timeout: 10000, keepalive });
    load([ldapPlugin({ keepalive: 30000, cache_ttl: 0 })]);
    expect((await call({ headers: { authorization: ldap('alice', 'wonder:land') } })).status).toBe(200);
    expect(connections.idleCount(server(30000))).toBe(1);
    expect((await call({ headers: { authorization: ldap('alice', 'wrong') } })).status).toBe(401);
    expect((await call({ headers: { authorization: ldap('bob', 'builder') } })).status).toBe(200);
    expect(connections.idleCount(server(30000))).toBe(1);
    load([ldapPlugin({ keepalive: 0, cache_ttl: 0 })]);
    expect((await call({ headers: { authorization: ldap('alice', 'wonder:land') } })).status).toBe(200);
    expect(connections.idleCount(server(0))).toBe(0);
  });

  it('StartTLS and LDAPS bind over TLS; verify_ldap_host refuses the self-signed certificate with a 500', async () => {
    load([ldapPlugin({ start_tls: true })]);
    expect((await upstreamHeaders({ authorization: ldap('alice', 'wonder:land') }))['x-credential-identifier']).toBe('alice');
    expect((await call({ headers: { authorization: ldap('alice', 'wrong') } })).status).toBe(401);
    load([ldapPlugin({ ldaps: true, ldap_port: directory.ldapsPort })]);
    expect((await upstreamHeaders({ authorization: ldap('bob', 'builder') }))['x-credential-identifier']).toBe('bob');
    load([ldapPlugin({ ldaps: true, ldap_port: directory.ldapsPort, verify_ldap_host: true })]);
    const refused = await call({ headers: { authorization: ldap('bob', 'builder') } });
    expect(refused.status).toBe(500);
    expect(logged.at(-1)?.detail).toMatchObject({ plugin: 'ldap-auth', error: expect.stringMatching(/certificate/i) });
  });

  it('ldaps together with start_tls is rejected by the config check', () => {
    expect(() => compile(snapshotWith([ldapPlugin({ ldaps: true, start_tls: true })]))).toThrow(SnapshotCompileError);
    expect(() => compile(snapshotWith([ldapPlugin({ ldaps: true, start_tls: true })]))).toThrow("'ldaps' and 'start_tls' cannot be enabled simultaneously");
    expect(() => compile(snapshotWith([ldapPlugin({ start_tls: true })]))).not.toThrow();
  });

  describe('with a directory that goes away', () => {
    let shortLived: LdapServerHandle;

    beforeAll(async () => {
      shortLived = await startLdapServer({ users: [{ name: 'carol', password: 'c4rol' }], attribute: 'cn' });
    });

    afterAll(async () => {
      await shortLived?.stop();
    });

    it('a remembered bind still passes within cache_ttl; anything not remembered is a 500', async () => {
      load([makePlugin({ name: 'ldap-auth', service: { id: service.id }, config: { ldap_host: shortLived.host, ldap_port: shortLived.port, base_dn: shortLived.baseDn, attribute: 'cn', cache_ttl: 60, timeout: 2000 } })]);
      const good = { authorization: ldap('carol', 'c4rol') };
      expect((await upstreamHeaders(good))['x-credential-identifier']).toBe('carol');
      await shortLived.stop();
      expect(shortLived.isRunning()).toBe(false);
      expect((await upstreamHeaders(good))['x-credential-identifier']).toBe('carol');
      expect((await call({ headers: { authorization: ldap('carol', 'other') } })).status).toBe(500);
    });
  });
});
