import { compileLinearRegex, type LinearRegex } from '@gatehouse/core';
import type { PdkExchange } from '../exchange';
import type { LuaValue } from './marshal';
import { multiple, type HostFunctions } from './vm';

/**
 * The read side of the PDK subset: `kong.request.*`, `kong.client.*`, `ngx.var`, `ngx.re`, `ngx.time`. Each function
 * reads the exchange whose snippet is running (`current()`).
 */

type Current = () => PdkExchange;

function str(value: LuaValue | undefined): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** Header name → value, repeated header lines as a list (Kong's get_headers). */
export function headerTable(ex: PdkExchange): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const raw = ex.ctx.req.rawHeaders;
  if (raw !== undefined) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const previous = out[name];
      out[name] = previous === undefined ? raw[i + 1]! : Array.isArray(previous) ? [...previous, raw[i + 1]!] : [previous, raw[i + 1]!];
    }
    return out;
  }
  for (const [name, value] of Object.entries(ex.ctx.req.headers)) if (value !== undefined) out[name] = value;
  return out;
}

/** Query argument → value, repeated arguments as a list (Kong's get_query). */
export function queryTable(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of query) {
    const previous = out[name];
    out[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return out;
}

/** Kong's uri_captures: 0 the whole match, 1… the groups, and the named groups by name. */
export function captureTable(ex: PdkExchange): Map<number | string, string | null> {
  const captures = ex.ctx.req.uriCaptures;
  const out = new Map<number | string, string | null>();
  if (captures === undefined) return out;
  if (captures.whole !== undefined) out.set(0, captures.whole);
  captures.unnamed.forEach((value, i) => {
    if (value !== null) out.set(i + 1, value);
  });
  for (const [name, value] of Object.entries(captures.named)) out.set(name, value);
  return out;
}

function hostOf(ex: PdkExchange): string {
  const host = ex.ctx.req.headers.host;
  const value = Array.isArray(host) ? host[0] ?? '' : host ?? '';
  return value.replace(/:\d+$/, '').toLowerCase();
}

function portOf(ex: PdkExchange): number | null {
  return ex.ctx.req.serverPort ?? ex.ctx.req.connection?.localPort ?? null;
}

function rawQuery(ex: PdkExchange): string {
  return ex.ctx.req.rawQuery ?? ex.ctx.req.query.toString();
}

function firstHeader(ex: PdkExchange, name: string): string | null {
  const value = ex.ctx.req.headers[name.toLowerCase().replace(/_/g, '-')];
  if (value === undefined) return null;
  return Array.isArray(value) ? value[0] ?? null : value;
}

/** `ngx.var.<name>` for the names nginx gives every request; any other name reads as nil. */
function ngxVar(ex: PdkExchange, name: string): string | number | null {
  const req = ex.ctx.req;
  if (name.startsWith('http_')) return firstHeader(ex, name.slice(5));
  if (name.startsWith('arg_')) return req.query.get(name.slice(4));
  if (name.startsWith('cookie_')) {
    const cookie = firstHeader(ex, 'cookie') ?? '';
    const wanted = name.slice(7);
    for (const pair of cookie.split(/;\s*/)) if (pair.slice(0, pair.indexOf('=')) === wanted) return pair.slice(pair.indexOf('=') + 1);
    return null;
  }
  switch (name) {
    case 'uri': return req.path;
    case 'request_uri': return rawQuery(ex) === '' ? req.path : `${req.path}?${rawQuery(ex)}`;
    case 'args': case 'query_string': return rawQuery(ex) === '' ? null : rawQuery(ex);
    case 'is_args': return rawQuery(ex) === '' ? '' : '?';
    case 'host': return hostOf(ex);
    case 'scheme': return req.scheme;
    case 'request_method': return req.method;
    case 'remote_addr': case 'realip_remote_addr': case 'binary_remote_addr': return req.clientIp;
    case 'server_port': return portOf(ex) === null ? null : String(portOf(ex));
    case 'server_addr': return req.connection?.localAddress ?? null;
    case 'server_protocol': return `HTTP/${req.httpVersion ?? '1.1'}`;
    case 'content_type': return firstHeader(ex, 'content-type');
    case 'content_length': return firstHeader(ex, 'content-length');
    case 'status': return ex.summary?.status ?? ex.response?.status ?? null;
    default: return null;
  }
}

const regexCache = new Map<string, LinearRegex>();
function regexOf(pattern: string, options: string): LinearRegex {
  const key = `${options}/${pattern}`;
  let regex = regexCache.get(key);
  if (regex === undefined) {
    regex = compileLinearRegex(pattern, { caseInsensitive: options.includes('i'), anchored: options.includes('a') });
    if (regexCache.size >= 1000) regexCache.clear();
    regexCache.set(key, regex);
  }
  return regex;
}

export function requestHost(current: Current): HostFunctions {
  return {
    request_get_header: (name) => firstHeader(current(), str(name)),
    request_get_headers: () => headerTable(current()),
    request_get_path: () => current().ctx.req.path,
    request_get_method: () => current().ctx.req.method,
    request_get_query: () => queryTable(current().ctx.req.query),
    request_get_query_arg: (name) => current().ctx.req.query.get(str(name)),
    request_get_raw_query: () => rawQuery(current()),
    request_get_path_with_query: () => ngxVar(current(), 'request_uri'),
    request_get_raw_body: () => current().requestBody?.toString('latin1') ?? null,
    request_get_body: () => parsedBody(current()),
    request_get_scheme: () => current().ctx.req.scheme,
    request_get_host: () => hostOf(current()),
    request_get_port: () => portOf(current()),
    request_get_http_version: () => Number(current().ctx.req.httpVersion ?? '1.1'),
    request_get_uri_captures: () => captureTable(current()),
    request_get_start_time: () => current().summary?.startedAt ?? Date.now(),
    client_get_ip: () => current().ctx.req.clientIp,
    client_get_port: () => current().ctx.req.connection?.localPort ?? null,
    // a consumer row is plain JSON data, which the Lua bridge converts; its typed fields are not declared as LuaValue
    client_get_consumer: () => current().ctx.consumer as unknown as LuaValue,
    client_get_credential: () => {
      const credential = current().ctx.credential;
      return credential === null ? null : { id: credential.id, consumer_id: credential.consumerId, identifier: credential.identifier };
    },
    ngx_var: (name) => ngxVar(current(), str(name)),
    ngx_time: () => Math.floor(Date.now() / 1000),
    ngx_now: () => Date.now() / 1000,
    ngx_re_match: (subject, pattern, options) => {
      const found = regexOf(str(pattern), str(options)).captures(str(subject));
      if (found === null) return null;
      const out = new Map<number | string, string | boolean>([[0, found.whole ?? '']]);
      found.unnamed.forEach((value, i) => out.set(i + 1, value ?? false));
      for (const [name, value] of Object.entries(found.named)) out.set(name, value);
      return out;
    },
    ngx_re_find: (subject, pattern, options) => {
      const found = regexOf(str(pattern), str(options)).captures(str(subject));
      if (found === null || found.start === undefined) return null;
      return multiple(found.start + 1, found.start + (found.whole ?? '').length);
    },
    ngx_encode_args: (args) => new URLSearchParams(Object.entries((args ?? {}) as Record<string, LuaValue>).map(([k, v]): [string, string] => [k, str(v)])).toString(),
    ngx_decode_args: (text) => queryTable(new URLSearchParams(str(text))),
    worker_pid: () => process.pid,
  };
}

function parsedBody(ex: PdkExchange): LuaValue {
  const body = ex.requestBody;
  if (body === null) return null;
  const type = (firstHeader(ex, 'content-type') ?? '').toLowerCase();
  if (type.includes('application/json')) {
    try {
      return JSON.parse(body.toString('utf8')) as LuaValue;
    } catch {
      return null;
    }
  }
  if (type.includes('application/x-www-form-urlencoded')) return queryTable(new URLSearchParams(body.toString('utf8')));
  return null;
}
