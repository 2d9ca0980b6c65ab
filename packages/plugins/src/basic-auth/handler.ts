import type { AuthResult, PluginContext } from '../contract';
import { dummyCostOf, type BasicAuthEntry, type BasicAuthIndex } from './credential-index';
import type { BasicAuthConfig } from './schema';
import { spendDummyWork, verifyPassword } from './password';
import { VerifiedCredentialCache } from './verified-cache';
import { perConfig } from '../shared/per-config';

interface PreparedConfig {
  /** Kong 3.6+ answers every refusal alike: missing, malformed, unknown or wrong credentials */
  invalid: AuthResult;
}

const prepare = perConfig((config: BasicAuthConfig): PreparedConfig => {
  const headers = { 'www-authenticate': `Basic realm="${config.realm}"` };
  return { invalid: { ok: false, response: { status: 401, body: { message: 'Unauthorized' }, headers } } };
});

const BASIC = /^\s*[Bb]asic\s*(.+)/;

interface GivenCredentials {
  username: string;
  password: string;
}

function headerOf(ctx: PluginContext, name: string): string | undefined {
  const value = ctx.req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `Basic base64(user:pass)`; the username is everything before the first `:` and may not be empty. */
export function parseBasic(header: string | undefined): GivenCredentials | null {
  if (header === undefined) return null;
  const m = BASIC.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!.trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Reads one header; with hide_credentials the header is not forwarded, whatever it held. */
function retrieve(ctx: PluginContext, config: BasicAuthConfig, name: string): GivenCredentials | null {
  const given = parseBasic(headerOf(ctx, name));
  if (config.hide_credentials) ctx.upstream.removeHeader(name);
  return given;
}

function verify(index: BasicAuthIndex, prepared: PreparedConfig, entry: BasicAuthEntry, given: GivenCredentials): AuthResult | Promise<AuthResult> {
  const key = VerifiedCredentialCache.keyOf(given.username, given.password, entry.passwordHash);
  if (index.verified.has(key)) return entry.result;
  return verifyPassword(given.password, entry.passwordHash, entry.result.credential.consumerId ?? undefined).then(
    (ok) => {
      if (!ok) return prepared.invalid;
      // a check that outlived a change of this credential leaves nothing behind for the new one
      if (index.byUsername.get(given.username) === entry) index.verified.add(key, given.username);
      return entry.result;
    },
    () => prepared.invalid,
  );
}

/** An unknown username answers after the same bcrypt work as a known one with a wrong password (no timing oracle). */
function unknownUser(index: BasicAuthIndex, prepared: PreparedConfig, given: GivenCredentials): Promise<AuthResult> {
  return spendDummyWork(given.password, dummyCostOf(index)).then(
    () => prepared.invalid,
    () => prepared.invalid,
  );
}

/**
 * Proxy-Authorization first, then Authorization (Kong's order): a Proxy-Authorization naming a known user decides;
 * otherwise Authorization must hold valid credentials.
 */
export function basicAuthAuthenticate(ctx: PluginContext<BasicAuthIndex>, config: BasicAuthConfig): AuthResult | Promise<AuthResult> {
  const prepared = prepare(config);
  if (headerOf(ctx, 'authorization') === undefined && headerOf(ctx, 'proxy-authorization') === undefined) return prepared.invalid;

  let given = retrieve(ctx, config, 'proxy-authorization');
  let entry = given ? ctx.index.byUsername.get(given.username) : undefined;
  if (entry === undefined) {
    given = retrieve(ctx, config, 'authorization');
    if (given === null) return prepared.invalid;
    entry = ctx.index.byUsername.get(given.username);
  }
  if (given === null) return prepared.invalid;
  if (entry === undefined) return unknownUser(ctx.index, prepared, given);
  return verify(ctx.index, prepared, entry, given);
}
