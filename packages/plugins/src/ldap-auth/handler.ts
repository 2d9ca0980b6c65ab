import type { AuthResult, PluginContext } from '../contract';
import { BindCache } from './bind-cache';
import { LdapConnections, type LdapBinder, type LdapServer } from './connections';
import { bindDn, parseLdapAuthorization, type GivenCredentials } from './credentials';
import type { LdapAuthConfig } from './schema';
import { perConfig } from '../shared/per-config';

/** What ldap-auth keeps between requests: the binder (kept connections) and the cache of successful binds. */
export interface LdapAuthRuntime {
  binder: LdapBinder;
  cache: BindCache;
}

/** The key of `ctx.runtime` under which a data plane may hand ldap-auth its own runtime (tests do). */
export const LDAP_AUTH_RUNTIME = 'ldap-auth';

/** One per process unless the data plane provides its own: kept connections and successful binds outlive snapshots. */
export const sharedLdapAuthRuntime: LdapAuthRuntime = { binder: new LdapConnections(), cache: new BindCache() };

interface PreparedConfig {
  server: LdapServer;
  transport: string;
  missing: AuthResult;
  invalid: AuthResult;
}

/** Kong keeps the historical `LDAP` spelling for the default header type; any other type is named as configured. */
function challengeOf(config: LdapAuthConfig): string {
  const scheme = config.header_type.toLowerCase() === 'ldap' ? 'LDAP' : config.header_type;
  return config.realm ? `${scheme} realm="${config.realm}"` : scheme;
}

const prepare = perConfig((config: LdapAuthConfig): PreparedConfig => {
  const headers = { 'www-authenticate': challengeOf(config) };
  const prepared: PreparedConfig = {
    server: {
      host: config.ldap_host,
      port: config.ldap_port,
      ldaps: config.ldaps,
      startTls: config.start_tls,
      verifyHost: config.verify_ldap_host,
      timeout: config.timeout,
      keepalive: config.keepalive,
    },
    transport: `${config.ldaps ? 'ldaps' : config.start_tls ? 'starttls' : 'ldap'}${config.verify_ldap_host ? '+verify' : ''}`,
    missing: { ok: false, response: { status: 401, body: { message: 'Unauthorized' }, headers } },
    invalid: { ok: false, response: { status: 401, body: { message: 'Invalid authentication credentials' }, headers } },
  };
  return prepared;
});

function headerOf(ctx: PluginContext, name: string): string | undefined {
  const value = ctx.req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function runtimeOf(ctx: PluginContext): LdapAuthRuntime {
  return (ctx.runtime[LDAP_AUTH_RUNTIME] as LdapAuthRuntime | undefined) ?? sharedLdapAuthRuntime;
}

/** A candidate credential from one header, with its cache key. */
interface Candidate {
  given: GivenCredentials;
  key: string;
}

function candidateOf(config: LdapAuthConfig, prepared: PreparedConfig, header: string | undefined): Candidate | null {
  const given = parseLdapAuthorization(header, config.header_type);
  if (given === null) return null;
  const key = BindCache.keyOf({
    host: config.ldap_host,
    port: config.ldap_port,
    transport: prepared.transport,
    baseDn: config.base_dn,
    attribute: config.attribute,
    username: given.username,
    password: given.password,
  });
  return { given, key };
}

function authenticated(ctx: PluginContext, config: LdapAuthConfig, username: string): AuthResult {
  if (config.hide_credentials) {
    ctx.upstream.removeHeader('authorization');
    ctx.upstream.removeHeader('proxy-authorization');
  }
  // no consumer: the directory knows the user, the gateway does not (the interface document, generic flow point 5)
  return { ok: true, consumer: null, credential: { id: null, identifier: username, consumerId: null } };
}

/**
 * Tries the candidates in order (Proxy-Authorization, then Authorization, as Kong does). A candidate remembered as a
 * successful bind decides at once, without a Promise; otherwise the LDAP server is asked. A server that cannot be
 * reached rejects the Promise: run-chain logs it and answers 500, anonymous or not (Kong does the same).
 */
function tryCandidates(
  ctx: PluginContext,
  config: LdapAuthConfig,
  prepared: PreparedConfig,
  runtime: LdapAuthRuntime,
  candidates: Array<Candidate | null>,
  from: number,
): AuthResult | Promise<AuthResult> {
  for (let i = from; i < candidates.length; i++) {
    const candidate = candidates[i];
    if (candidate == null) continue;
    if (runtime.cache.has(candidate.key)) return authenticated(ctx, config, candidate.given.username);
    const dn = bindDn(config.attribute, candidate.given.username, config.base_dn);
    return runtime.binder.bind(prepared.server, dn, candidate.given.password).then((bound) => {
      if (!bound) return tryCandidates(ctx, config, prepared, runtime, candidates, i + 1);
      runtime.cache.add(candidate.key, config.cache_ttl);
      return authenticated(ctx, config, candidate.given.username);
    });
  }
  return prepared.invalid;
}

export function ldapAuthAuthenticate(ctx: PluginContext, config: LdapAuthConfig): AuthResult | Promise<AuthResult> {
  const prepared = prepare(config);
  const proxyAuthorization = headerOf(ctx, 'proxy-authorization');
  const authorization = headerOf(ctx, 'authorization');
  if (proxyAuthorization === undefined && authorization === undefined) return prepared.missing;
  const fromProxy = candidateOf(config, prepared, proxyAuthorization);
  let fromAuthorization = candidateOf(config, prepared, authorization);
  if (fromProxy !== null && fromAuthorization !== null && fromProxy.key === fromAuthorization.key) fromAuthorization = null;
  const candidates = [fromProxy, fromAuthorization];
  return tryCandidates(ctx, config, prepared, runtimeOf(ctx), candidates, 0);
}
