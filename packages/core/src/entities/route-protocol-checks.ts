import type { FieldErrors } from '../errors';

/**
 * Kong 3.9's per-protocol route checks (its `routes` entity checks and protocol subschemas): the protocol families
 * that may not be mixed, the fields each family refuses, the matching fields each family needs, and where `snis`
 * may be set. Messages are Kong's, so a file written for Kong gets the answer Kong would give.
 */

/** The families a route's protocols must stay within, in Kong's order. */
const FAMILIES: readonly (readonly string[])[] = [['http', 'https'], ['tcp', 'tls', 'udp'], ['tls_passthrough'], ['grpc', 'grpcs']];
const SNI_PROTOCOLS = new Set(['grpcs', 'https', 'tls', 'tls_passthrough']);
const STREAM = new Set(['tcp', 'tls', 'udp', 'tls_passthrough']);
const GRPC = new Set(['grpc', 'grpcs']);
const HTTP = new Set(['http', 'https']);

function empty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

const quoted = (words: readonly string[]) => words.map((w) => `'${w}'`).join(', ');

/** `these sets are mutually exclusive: ('http', 'https'), ('grpc', 'grpcs')` when a route mixes families. */
export function mixedFamilies(protocols: readonly string[]): string | null {
  const seen: (readonly string[])[] = [];
  for (const protocol of protocols) {
    const family = FAMILIES.find((f) => f.includes(protocol));
    if (family && !seen.includes(family)) seen.push(family);
  }
  if (seen.length <= 1) return null;
  return `these sets are mutually exclusive: ${seen.map((f) => `(${quoted(f)})`).join(', ')}`;
}

/** Under `router_flavor = expressions`, HTTP and gRPC routes may set `sources`/`destinations` and `expression` counts as a matching field. */
export interface RouteCheckOptions {
  expressions?: boolean;
}

/** The fields a protocol family refuses, with Kong's message for each. */
function refusedFields(protocols: readonly string[], expressions: boolean): Array<[string, string]> {
  const first = protocols[0];
  if (HTTP.has(first)) {
    if (expressions) return [];
    return ['sources', 'destinations'].map((f) => [f, `cannot set '${f}' when 'protocols' is 'http' or 'https'`]);
  }
  if (GRPC.has(first)) {
    const fields = expressions ? ['strip_path', 'methods'] : ['strip_path', 'methods', 'sources', 'destinations'];
    return fields.map((f) => [f, `cannot set '${f}' when 'protocols' is 'grpc' or 'grpcs'`]);
  }
  if (STREAM.has(first)) {
    return ['methods', 'hosts', 'paths', 'headers'].map((f) => [f, `cannot set '${f}' when 'protocols' is 'tcp', 'tls', 'tls_passthrough' or 'udp'`]);
  }
  return [];
}

function refused(entity: Record<string, unknown>, field: string): boolean {
  // a grpc route's strip_path may only be false (Kong's subschema default)
  if (field === 'strip_path') return entity.strip_path === true;
  return !empty(entity[field]);
}

/** The "must set one of …" check of the route's family, or null when it holds. */
function missingMatchFields(protocols: readonly string[], entity: Record<string, unknown>, expressions: boolean): string | null {
  const extra = expressions ? ['expression'] : [];
  const needs = (base: string[], when: string) => {
    const fields = [...base, ...extra];
    return fields.every((f) => empty(entity[f])) ? `must set one of ${quoted(fields)} when 'protocols' is '${when}'` : null;
  };
  const has = (p: string) => protocols.includes(p);
  if (has('https')) return needs(['methods', 'hosts', 'headers', 'paths', 'snis'], 'https');
  if (has('http')) return needs(['methods', 'hosts', 'headers', 'paths'], 'http');
  if (has('grpcs')) return needs(['hosts', 'headers', 'paths', 'snis'], 'grpcs');
  if (has('grpc')) return needs(['hosts', 'headers', 'paths'], 'grpc');
  if (protocols.length > 0 && protocols.every((p) => p === 'tcp' || p === 'tls' || p === 'udp')) {
    const fields = ['sources', 'destinations', 'snis', ...extra];
    return fields.every((f) => empty(entity[f])) ? `must set one of ${quoted(fields)} when 'protocols' is 'tcp', 'tls' or 'udp'` : null;
  }
  if (protocols.length > 0 && protocols.every((p) => p === 'tls_passthrough') && empty(entity.snis) && (!expressions || empty(entity.expression))) {
    return "must set snis when 'protocols' is 'tls_passthrough'";
  }
  return null;
}

/** A `host` key in `headers` is refused: hosts are matched through `hosts`. */
function hostHeader(entity: Record<string, unknown>): string | null {
  const headers = entity.headers;
  if (!headers || typeof headers !== 'object') return null;
  return Object.keys(headers).some((k) => k.toLowerCase() === 'host')
    ? "cannot contain 'host' header, which must be specified in the 'hosts' attribute"
    : null;
}

/** Every Kong check of a route's protocols against its other fields; null when the route is acceptable. */
export function routeProtocolErrors(entity: Record<string, unknown>, options: RouteCheckOptions = {}): FieldErrors | null {
  const expressions = options.expressions === true;
  const protocols = (entity.protocols as string[] | undefined) ?? ['http', 'https'];
  const mixed = mixedFamilies(protocols);
  if (mixed) return { protocols: mixed };
  const fields: FieldErrors = {};
  const host = hostHeader(entity);
  if (host) fields.headers = host;
  for (const [field, message] of refusedFields(protocols, expressions)) {
    if (refused(entity, field) && fields[field] === undefined) fields[field] = message;
  }
  if (Object.keys(fields).length > 0) return fields;
  if (!empty(entity.snis) && !protocols.some((p) => SNI_PROTOCOLS.has(p))) {
    return { '@entity': ["'snis' can only be set when 'protocols' is 'grpcs', 'https', 'tls' or 'tls_passthrough'"], snis: 'length must be 0' };
  }
  const missing = missingMatchFields(protocols, entity, expressions);
  return missing ? { '@entity': [missing] } : null;
}

/** A grpc route's strip_path defaults to false, as Kong's grpc subschema has it. */
export function grpcRouteDefaults(input: Record<string, unknown>): Record<string, unknown> {
  const protocols = input.protocols;
  if (!Array.isArray(protocols) || input.strip_path !== undefined) return input;
  if (protocols.length > 0 && protocols.every((p) => p === 'grpc' || p === 'grpcs')) return { ...input, strip_path: false };
  return input;
}
