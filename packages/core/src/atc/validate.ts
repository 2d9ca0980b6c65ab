import type { AtcExpression, AtcPredicate, AtcType } from './ast';
import { predicatesOf } from './ast';
import { AtcSyntaxError, parseAtc } from './parse';

/**
 * The fields a route expression may read and their types (Kong 3.9, kong/router/fields.lua), and the crate's
 * semantic checks (src/semantics.rs) with its messages. HTTP routes (`http`, `https`, `grpc`, `grpcs`) read the
 * HTTP schema; stream routes (`tcp`, `tls`, `udp`, `tls_passthrough`) the stream one.
 */

type Schema = ReadonlyMap<string, AtcType>;

const HTTP_SCHEMA: Schema = new Map<string, AtcType>([
  ['net.protocol', 'String'],
  ['tls.sni', 'String'],
  ['http.method', 'String'],
  ['http.host', 'String'],
  ['http.path', 'String'],
  ['http.path.segments.*', 'String'],
  ['http.headers.*', 'String'],
  ['http.queries.*', 'String'],
  ['net.src.port', 'Int'],
  ['net.dst.port', 'Int'],
  ['http.path.segments.len', 'Int'],
  ['net.src.ip', 'IpAddr'],
  ['net.dst.ip', 'IpAddr'],
]);

const STREAM_SCHEMA: Schema = new Map<string, AtcType>([
  ['net.protocol', 'String'],
  ['tls.sni', 'String'],
  ['net.src.port', 'Int'],
  ['net.dst.port', 'Int'],
  ['net.src.ip', 'IpAddr'],
  ['net.dst.ip', 'IpAddr'],
]);

const STREAM_PROTOCOLS = new Set(['tcp', 'tls', 'udp', 'tls_passthrough']);

/** The schema of a route's protocols (its first one decides, as in Kong). */
function schemaOf(protocols: readonly string[]): Schema {
  return STREAM_PROTOCOLS.has(protocols[0] ?? 'http') ? STREAM_SCHEMA : HTTP_SCHEMA;
}

/** The crate's `Schema::type_of`: the field itself, or `<prefix>.*` for its last dotted part. */
export function atcFieldType(field: string, protocols: readonly string[] = ['http']): AtcType | undefined {
  const schema = schemaOf(protocols);
  const exact = schema.get(field);
  if (exact !== undefined) return exact;
  const dot = field.lastIndexOf('.');
  return dot < 0 ? undefined : schema.get(`${field.slice(0, dot)}.*`);
}

function checkPredicate(p: AtcPredicate, protocols: readonly string[]): string | null {
  const lhsType = atcFieldType(p.field, protocols);
  if (lhsType === undefined) return 'Unknown LHS field';
  if (p.op !== '~' && p.op !== 'in' && p.op !== 'not in' && lhsType !== p.value.type) {
    return 'Type mismatch between the LHS and RHS values of predicate';
  }
  if (p.lower && lhsType !== 'String') return 'lower-case transformation function only supported with String type fields';
  switch (p.op) {
    case '==':
    case '!=':
      return null;
    case '~':
      return lhsType === 'String' ? null : 'Regex operators only supports string operands';
    case '^=':
    case '=^':
      return p.value.type === 'String' ? null : 'Prefix/Postfix operators only supports string operands';
    case '>':
    case '>=':
    case '<':
    case '<=':
      return p.value.type === 'Int' ? null : 'Greater/GreaterOrEqual/Less/LessOrEqual operators only supports integer operands';
    case 'in':
    case 'not in':
      return lhsType === 'IpAddr' && p.value.type === 'IpCidr' ? null : 'In/NotIn operators only supports IP in CIDR';
    case 'contains':
      return p.value.type === 'String' ? null : 'Contains operator only supports string operands';
  }
}

const SEGMENTS = 'http.path.segments.';
const SEGMENT_RANGE = /^(0|[1-9]\d*)(_([1-9]\d*))?$/;

/** Kong's own check of `http.path.segments.<n>` / `<n>_<m>` (n < m) / `len`. */
function segmentFieldError(field: string): string | null {
  if (!field.startsWith(SEGMENTS)) return null;
  const suffix = field.slice(SEGMENTS.length);
  if (suffix === 'len') return null;
  const m = SEGMENT_RANGE.exec(suffix);
  if (m === null || (m[3] !== undefined && Number(m[1]) >= Number(m[3]))) return 'illformed http.path.segments.* field';
  return null;
}

/** Kong reads the deprecated `net.port` as `net.dst.port` (kong/router/transform.lua `amending_expression`). */
export function amendAtcExpression(source: string): string {
  return source.includes('net.port') ? source.replace(/(net\.port)(\s*)([=><!])/g, 'net.dst.port$2$3') : source;
}

/**
 * Parses and checks a route's expression against the schema of its protocols: the parsed expression, or Kong's
 * message (without its `Router Expression failed validation: ` lead).
 */
export function checkAtcExpression(source: string, protocols: readonly string[]): { expression: AtcExpression } | { error: string } {
  let expression: AtcExpression;
  try {
    expression = parseAtc(amendAtcExpression(source));
  } catch (err) {
    if (err instanceof AtcSyntaxError) return { error: err.message };
    throw err;
  }
  const predicates = predicatesOf(expression);
  for (const p of predicates) {
    const error = checkPredicate(p, protocols);
    if (error !== null) return { error };
  }
  for (const p of predicates) {
    const error = segmentFieldError(p.field);
    if (error !== null) return { error };
  }
  return { expression };
}
