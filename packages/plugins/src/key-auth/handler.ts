import type { AuthResult, PluginContext, PluginRequest } from '../contract';
import { readBodyField, removeBodyField } from './body';
import type { KeyAuthIndex } from './credential-index';
import type { KeyAuthConfig } from './schema';
import { perConfig } from '../shared/per-config';

const DEFAULT_REALM = 'gatehouse';

interface KeyName {
  /** as configured: the query argument and body field name */
  name: string;
  /** lower-cased header names to try: `api_key` also accepts `api-key` and the other way round */
  headers: string[];
}

/** What a config turns into once: header variants and the refusals, so requests allocate neither. */
interface PreparedConfig {
  names: KeyName[];
  missing: AuthResult;
  invalid: AuthResult;
  duplicate: AuthResult;
}

const prepare = perConfig((config: KeyAuthConfig): PreparedConfig => {
  const challenge = { 'www-authenticate': `Key realm="${config.realm ?? DEFAULT_REALM}"` };
  const prepared: PreparedConfig = {
    names: config.key_names.map((name) => {
      const lower = name.toLowerCase();
      const variants = new Set([lower, lower.replaceAll('_', '-'), lower.replaceAll('-', '_')]);
      return { name, headers: [...variants] };
    }),
    missing: { ok: false, response: { status: 403, body: { message: 'No API key found in headers or querystring' } } },
    invalid: { ok: false, response: { status: 401, body: { message: 'Invalid authentication credentials' }, headers: challenge } },
    duplicate: { ok: false, response: { status: 401, body: { message: 'Duplicate API key found' }, headers: challenge } },
  };
  return prepared;
});

/** Marks a key given more than once (repeated header, repeated query argument, JSON array). */
const DUPLICATE = Symbol('duplicate');
type Found = string | typeof DUPLICATE | undefined;

/** How many times a header arrived, by the raw list; `_` and `-` count as the same. */
function rawCount(raw: readonly string[], variants: string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (variants.includes(raw[i]!.toLowerCase())) count++;
  return count;
}

function fromHeaders(req: PluginRequest, key: KeyName): Found {
  for (const header of key.headers) {
    const value = req.headers[header];
    if (value === undefined) continue;
    if (Array.isArray(value)) return value.length > 1 ? DUPLICATE : value[0];
    // Node joins a repeated custom header with ", ": only the raw list tells a comma in one value from two headers
    if (value.includes(',') && req.rawHeaders && rawCount(req.rawHeaders, key.headers) > 1) return DUPLICATE;
    return value;
  }
  return undefined;
}

function fromQuery(req: PluginRequest, key: KeyName): Found {
  const value = req.query.get(key.name);
  if (value === null || value === '') return undefined;
  return req.query.getAll(key.name).length > 1 ? DUPLICATE : value;
}

function contentType(req: PluginRequest): string | undefined {
  const value = req.headers['content-type'];
  return Array.isArray(value) ? value[0] : value;
}

function fromBody(req: PluginRequest, body: Buffer, key: KeyName): Found {
  const field = readBodyField(body, contentType(req), key.name);
  if (field.kind === 'many') return DUPLICATE;
  return field.kind === 'one' ? field.value : undefined;
}

function hideKey(ctx: PluginContext<KeyAuthIndex>, config: KeyAuthConfig, key: KeyName, body: Buffer | null): void {
  for (const header of key.headers) ctx.upstream.removeHeader(header);
  ctx.upstream.removeQueryArg(key.name);
  if (config.key_in_body && body) {
    const rewritten = removeBodyField(body, contentType(ctx.req), key.name);
    if (rewritten) ctx.upstream.setBody(rewritten);
  }
}

function lookUp(ctx: PluginContext<KeyAuthIndex>, prepared: PreparedConfig, value: string): AuthResult {
  if (value === '') return prepared.missing;
  const entry = ctx.index.byKey.get(value);
  if (entry === undefined) return prepared.invalid;
  if (entry.expiresAt !== 0 && Date.now() >= entry.expiresAt) return prepared.invalid;
  return entry;
}

/**
 * Searches the key names in order; for each name: header, then query string, then body. The first name that yields a
 * value decides. `body` is null until the search first needs it; reading it is the only asynchronous step.
 */
function search(ctx: PluginContext<KeyAuthIndex>, config: KeyAuthConfig, prepared: PreparedConfig, from: number, body: Buffer | null): AuthResult | Promise<AuthResult> {
  const { names } = prepared;
  for (let i = from; i < names.length; i++) {
    const key = names[i]!;
    let found: Found;
    if (config.key_in_header) found = fromHeaders(ctx.req, key);
    if (found === undefined && config.key_in_query) found = fromQuery(ctx.req, key);
    if (found === undefined && config.key_in_body) {
      if (body === null) return ctx.req.readBody().then((read) => search(ctx, config, prepared, i, read));
      found = fromBody(ctx.req, body, key);
    }
    if (found === undefined) continue;
    if (found === DUPLICATE) return prepared.duplicate;
    if (config.hide_credentials) {
      // the body copy of the key goes too, so the body is read even when the key came from a header
      if (config.key_in_body && body === null) {
        const value = found;
        return ctx.req.readBody().then((read) => {
          hideKey(ctx, config, key, read);
          return lookUp(ctx, prepared, value);
        });
      }
      hideKey(ctx, config, key, body);
    }
    return lookUp(ctx, prepared, found);
  }
  return prepared.missing;
}

export function keyAuthAuthenticate(ctx: PluginContext<KeyAuthIndex>, config: KeyAuthConfig): AuthResult | Promise<AuthResult> {
  return search(ctx, config, prepare(config), 0, null);
}
