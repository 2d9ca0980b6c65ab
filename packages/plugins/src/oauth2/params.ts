import type { PluginRequest } from '../contract';
import { readBodyField } from '../key-auth/body';

/** The parameters the endpoints and the access check read; multipart bodies are searched for these names only. */
const KNOWN = [
  'grant_type',
  'client_id',
  'client_secret',
  'code',
  'refresh_token',
  'scope',
  'state',
  'provision_key',
  'authenticated_userid',
  'redirect_uri',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'code_verifier',
  'access_token',
];

/**
 * OAuth 2.0 request parameters: the query string, and for POST, PUT and PATCH the body (form, JSON or multipart),
 * a body value replacing a query value of the same name (Kong merges them so).
 */
export class OAuth2Params {
  /** `nonStrings`: names whose JSON value was a number, a boolean or an array (Kong sees no string there) */
  constructor(
    private readonly values: Map<string, string[]>,
    private readonly nonStrings: ReadonlySet<string> = new Set(),
  ) {}

  /** the value when given exactly once; a repeated parameter is not a usable value */
  get(name: string): string | undefined {
    const values = this.values.get(name);
    return values !== undefined && values.length === 1 ? values[0] : undefined;
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  /** given more than once (Kong sees a table, not a string) */
  repeated(name: string): boolean {
    return (this.values.get(name)?.length ?? 0) > 1;
  }

  /** given, but not as one string: repeated, or a JSON number, boolean or array */
  notAString(name: string): boolean {
    return this.repeated(name) || (this.values.has(name) && this.nonStrings.has(name));
  }
}

function contentTypeOf(req: PluginRequest): string {
  const value = req.headers['content-type'];
  return ((Array.isArray(value) ? value[0] : value) ?? '').toLowerCase();
}

const PARAM_BODIES = ['application/x-www-form-urlencoded', 'application/json', 'multipart/form-data'];

/** Whether the body may hold parameters: POST, PUT or PATCH with a form, JSON or multipart body. */
export function hasBodyParams(req: PluginRequest): boolean {
  const method = req.method;
  if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return false;
  const type = contentTypeOf(req);
  return PARAM_BODIES.some((t) => type.startsWith(t));
}

function jsonValues(value: unknown): string[] | null {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (Array.isArray(value)) {
    const items = value.filter((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean').map(String);
    return items.length > 0 ? items : null;
  }
  return null;
}

function bodyValues(body: Buffer, contentType: string, nonStrings: Set<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (body.length === 0) return out;
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) out.set(name, [...(out.get(name) ?? []), value]);
  } else if (contentType.startsWith('application/json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return out;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return out;
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
      const values = jsonValues(value);
      if (values) out.set(name, values);
      if (values && typeof value !== 'string') nonStrings.add(name);
    }
  } else if (contentType.startsWith('multipart/form-data')) {
    for (const name of KNOWN) {
      const field = readBodyField(body, contentType, name);
      if (field.kind === 'one') out.set(name, [field.value]);
      else if (field.kind === 'many') out.set(name, ['', '']);
    }
  }
  return out;
}

export function queryParams(req: PluginRequest): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, value] of req.query) out.set(name, [...(out.get(name) ?? []), value]);
  return out;
}

/** Query and body parameters (the body only for POST, PUT and PATCH). */
export async function readParams(req: PluginRequest): Promise<OAuth2Params> {
  const values = queryParams(req);
  const nonStrings = new Set<string>();
  if (hasBodyParams(req)) {
    for (const [name, given] of bodyValues(await req.readBody(), contentTypeOf(req), nonStrings)) values.set(name, given);
  }
  return new OAuth2Params(values, nonStrings);
}

export function isFormBody(req: PluginRequest): boolean {
  return contentTypeOf(req).includes('application/x-www-form-urlencoded');
}
