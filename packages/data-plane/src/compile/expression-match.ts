import {
  compileLinearRegex,
  inNetwork,
  sameAddress,
  socketAddressBytes,
  type AtcExpression,
  type AtcPredicate,
  type IpValue,
  type LinearRegex,
} from '@gatehouse/core';

/**
 * Route expressions (Kong's ATC language) compiled to closures, evaluated as the Kong/atc-router crate does
 * (src/interpreter.rs): a predicate on a field the request lacks is false; a field with several values (a header sent
 * on several lines, a query argument given twice) matches only when every value does, or any one with `any(…)`;
 * `lower(…)` lower-cases before comparing. Fields are Kong 3.9's (kong/router/fields.lua), read lazily.
 */

export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** What the proxy knows of a request beyond method, host, path and headers. */
export interface RequestFacts {
  /** `http` or `https` (Kong's `net.protocol` for HTTP routes) */
  scheme: string;
  /** the raw query string, without `?` */
  query: string;
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
}

/** One request as expressions read it; derived values are computed on first use. */
export class ExpressionRequest {
  method = '';
  /** the Host without its port, lower-cased */
  host = '';
  path = '';
  headers: RequestHeaders = {};
  sni: string | undefined = undefined;
  facts: RequestFacts | undefined = undefined;
  private queries: Map<string, string[]> | null = null;
  private segments: string[] | null = null;
  private src: Uint8Array | null | undefined = undefined;
  private dst: Uint8Array | null | undefined = undefined;

  reset(method: string, host: string, path: string, headers: RequestHeaders, sni: string | undefined, facts: RequestFacts | undefined): void {
    this.method = method;
    this.host = host;
    this.path = path;
    this.headers = headers;
    this.sni = sni;
    this.facts = facts;
    this.queries = null;
    this.segments = null;
    this.src = undefined;
    this.dst = undefined;
  }

  query(name: string): string | string[] | undefined {
    if (this.queries === null) {
      this.queries = new Map();
      for (const [key, value] of new URLSearchParams(this.facts?.query ?? '')) {
        const list = this.queries.get(key);
        if (list === undefined) this.queries.set(key, [value]);
        else list.push(value);
      }
    }
    const values = this.queries.get(name);
    return values === undefined ? undefined : values.length === 1 ? values[0] : values;
  }

  /** the path's segments after the leading `/` (a trailing empty one dropped) */
  pathSegments(): string[] {
    if (this.segments === null) {
      const parts = this.path.slice(1).split('/');
      if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
      this.segments = parts;
    }
    return this.segments;
  }

  srcIp(): Uint8Array | null {
    if (this.src === undefined) this.src = socketAddressBytes(this.facts?.remoteAddress);
    return this.src;
  }

  dstIp(): Uint8Array | null {
    if (this.dst === undefined) this.dst = socketAddressBytes(this.facts?.localAddress);
    return this.dst;
  }
}

/** What one evaluation records: the value `http.path` matched (what `strip_path` removes) and its regex. */
export interface MatchState {
  matched: string | null;
  pattern: LinearRegex | null;
}

export type CompiledExpression = (req: ExpressionRequest, m: MatchState) => boolean;

type Value = string | number | Uint8Array;
type Reader = (req: ExpressionRequest) => Value | Value[] | undefined | null;

function segmentReader(range: string): Reader {
  if (range === 'len') return (req) => req.pathSegments().length;
  const [from, to] = range.split('_').map(Number) as [number, number | undefined];
  return (req) => {
    const segments = req.pathSegments();
    if (to === undefined) return segments[from];
    if (to >= segments.length) return undefined;
    return segments.slice(from, to + 1).join('/');
  };
}

function readerOf(field: string): Reader {
  switch (field) {
    case 'http.method':
      return (req) => req.method;
    case 'http.host':
      return (req) => req.host;
    case 'http.path':
      return (req) => req.path;
    case 'net.protocol':
      return (req) => req.facts?.scheme;
    case 'tls.sni':
      return (req) => req.sni;
    case 'net.src.ip':
      return (req) => req.srcIp();
    case 'net.dst.ip':
      return (req) => req.dstIp();
    case 'net.src.port':
      return (req) => req.facts?.remotePort;
    case 'net.dst.port':
      return (req) => req.facts?.localPort;
  }
  if (field.startsWith('http.headers.')) {
    const name = field.slice('http.headers.'.length).toLowerCase().replace(/_/g, '-');
    return (req) => req.headers[name];
  }
  if (field.startsWith('http.queries.')) {
    const name = field.slice('http.queries.'.length);
    return (req) => req.query(name);
  }
  if (field.startsWith('http.path.segments.')) return segmentReader(field.slice('http.path.segments.'.length));
  throw new Error(`unknown expression field: ${field}`);
}

type Test = (value: Value, m: MatchState) => boolean;

function ipTest(op: string, ip: IpValue): Test {
  if (op === 'in') return (v) => inNetwork(v as Uint8Array, ip);
  if (op === 'not in') return (v) => !inNetwork(v as Uint8Array, ip);
  if (op === '==') return (v) => sameAddress(v as Uint8Array, ip.bytes);
  return (v) => !sameAddress(v as Uint8Array, ip.bytes);
}

/** The comparison of one value; records what `http.path` matched when `path` is set. */
function testOf(p: AtcPredicate, path: boolean): Test {
  const v = p.value;
  if (v.type === 'IpAddr' || v.type === 'IpCidr') return ipTest(p.op, v.value);
  if (v.type === 'Regex') {
    const regex = compileLinearRegex(v.value);
    return (value, m) => {
      const found = regex.exec(value as string);
      if (found === null) return false;
      if (path) {
        m.matched = found;
        m.pattern = regex;
      }
      return true;
    };
  }
  const rhs = v.value;
  const record = (m: MatchState) => {
    if (path) {
      m.matched = rhs as string;
      m.pattern = null;
    }
    return true;
  };
  switch (p.op) {
    case '==':
      return (value, m) => value === rhs && record(m);
    case '!=':
      return (value) => value !== rhs;
    case '^=':
      return (value, m) => (value as string).startsWith(rhs as string) && record(m);
    case '=^':
      return (value, m) => (value as string).endsWith(rhs as string) && record(m);
    case 'contains':
      return (value) => (value as string).includes(rhs as string);
    case '>':
      return (value) => (value as number) > (rhs as number);
    case '>=':
      return (value) => (value as number) >= (rhs as number);
    case '<':
      return (value) => (value as number) < (rhs as number);
    case '<=':
      return (value) => (value as number) <= (rhs as number);
    default:
      throw new Error(`operator ${p.op} does not apply to ${v.type}`);
  }
}

function compilePredicate(p: AtcPredicate): CompiledExpression {
  const read = readerOf(p.field);
  const test = testOf(p, p.field === 'http.path');
  const lower = p.lower;
  const one = (value: Value, m: MatchState) => test(lower ? (value as string).toLowerCase() : value, m);
  if (p.any) {
    return (req, m) => {
      const value = read(req);
      if (value === undefined || value === null) return false;
      return Array.isArray(value) ? value.some((v) => one(v, m)) : one(value, m);
    };
  }
  return (req, m) => {
    const value = read(req);
    if (value === undefined || value === null) return false;
    if (!Array.isArray(value)) return one(value, m);
    if (value.length === 0) return false;
    for (const v of value) if (!one(v, m)) return false;
    return true;
  };
}

/** An expression as a closure over the request. */
export function compileExpression(e: AtcExpression): CompiledExpression {
  switch (e.kind) {
    case 'predicate':
      return compilePredicate(e);
    case 'not': {
      const inner = compileExpression(e.expr);
      return (req, m) => !inner(req, m);
    }
    case 'and': {
      const left = compileExpression(e.left);
      const right = compileExpression(e.right);
      return (req, m) => left(req, m) && right(req, m);
    }
    case 'or': {
      const left = compileExpression(e.left);
      const right = compileExpression(e.right);
      return (req, m) => left(req, m) || right(req, m);
    }
  }
}
