import { defaultMessage, type PdkExchange, type PdkPhase } from '../exchange';
import type { LuaValue } from './marshal';
import type { HostFunctions } from './vm';
import { pushRequestLog } from '../../shared/request-logs';

/**
 * The write side of the PDK subset: `kong.response.*`, `kong.service.request.*`, `kong.log.*`, `ngx.exit`/`say`/
 * `status`. A function called in a phase where Kong does not allow it fails with Kong's message.
 */

type Current = () => PdkExchange;

function str(value: LuaValue | undefined): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

function only(ex: PdkExchange, name: string, phases: readonly PdkPhase[]): void {
  if (!phases.includes(ex.phase)) throw new Error(`${name} is not allowed in the ${ex.phase} phase`);
}

const REQUEST_PHASES: readonly PdkPhase[] = ['rewrite', 'access'];
const HEADER_PHASES: readonly PdkPhase[] = ['rewrite', 'access', 'header_filter'];
const EXIT_PHASES: readonly PdkPhase[] = ['rewrite', 'access'];

function headerValue(value: LuaValue | undefined): string | string[] {
  if (Array.isArray(value)) return value.map((v) => str(v));
  if (typeof value === 'boolean') return String(value);
  return str(value);
}

function headersArg(value: LuaValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [name, v] of Object.entries(value)) {
    const hv = headerValue(v as LuaValue);
    out[name] = Array.isArray(hv) ? hv.join(', ') : hv;
  }
  return out;
}

/** Sets (or adds to) a header of the client's response, in access (for every answer) or header_filter. */
function setResponseHeader(ex: PdkExchange, name: string, value: string | string[], add: boolean): void {
  const lower = name.toLowerCase();
  if (ex.response !== undefined) {
    const previous = ex.response.headers[lower];
    const values = Array.isArray(value) ? value : [value];
    if (add && previous !== undefined) ex.response.headers[lower] = [...(Array.isArray(previous) ? previous : [previous]), ...values];
    else ex.response.headers[lower] = values.length === 1 ? values[0]! : values;
    return;
  }
  ex.ctx.response?.setHeader(name, Array.isArray(value) ? value.join(', ') : value);
}

function exitWith(ex: PdkExchange, status: number, body: unknown, headers: Record<string, string>): void {
  only(ex, 'kong.response.exit', EXIT_PHASES);
  if (!Number.isInteger(status) || status < 100 || status > 599) throw new Error('code must be a number between 100 and 599');
  ex.exit = { status, body: body ?? null, headers };
}

export function responseHost(current: Current): HostFunctions {
  return {
    response_exit: (status, body, headers) => {
      const ex = current();
      const value = typeof body === 'string' ? body : body === null || body === undefined ? null : body;
      exitWith(ex, Number(status), value, headersArg(headers));
    },
    response_error: (status, message, headers) => {
      const ex = current();
      exitWith(ex, Number(status), { message: typeof message === 'string' ? message : defaultMessage(Number(status)) }, headersArg(headers));
    },
    response_set_header: (name, value) => {
      const ex = current();
      only(ex, 'kong.response.set_header', HEADER_PHASES);
      setResponseHeader(ex, str(name), headerValue(value), false);
    },
    response_add_header: (name, value) => {
      const ex = current();
      only(ex, 'kong.response.add_header', HEADER_PHASES);
      setResponseHeader(ex, str(name), headerValue(value), true);
    },
    response_set_headers: (headers) => {
      const ex = current();
      only(ex, 'kong.response.set_headers', HEADER_PHASES);
      for (const [name, value] of Object.entries(headersArg(headers))) setResponseHeader(ex, name, value, false);
    },
    response_clear_header: (name) => {
      const ex = current();
      only(ex, 'kong.response.clear_header', ['header_filter']);
      delete ex.response?.headers[str(name).toLowerCase()];
    },
    response_get_header: (name) => {
      const ex = current();
      const headers = ex.response?.headers ?? ex.summary?.responseHeaders;
      const value = headers?.[str(name).toLowerCase()];
      return Array.isArray(value) ? value[0] ?? null : value ?? null;
    },
    response_get_headers: () => {
      const ex = current();
      return (ex.response?.headers ?? ex.summary?.responseHeaders ?? {}) as LuaValue;
    },
    response_get_status: () => {
      const ex = current();
      return ex.response?.status ?? ex.summary?.status ?? ex.exit?.status ?? null;
    },
    response_get_source: () => {
      const ex = current();
      return ex.summary?.source ?? (ex.response !== undefined ? 'service' : 'kong');
    },
    response_get_raw_body: () => {
      const ex = current();
      only(ex, 'kong.response.get_raw_body', ['body_filter']);
      return (ex.replacedResponseBody ?? ex.responseBody)?.toString('latin1') ?? null;
    },
    response_set_raw_body: (body) => {
      const ex = current();
      only(ex, 'kong.response.set_raw_body', ['body_filter']);
      ex.replacedResponseBody = Buffer.from(str(body), 'latin1');
    },
    ...serviceRequestHost(current),
    ...ngxOutputHost(current),
    log: (level, message, line, source, name, namewhat, what) => {
      const ex = current();
      const text = (v: LuaValue | undefined) => (typeof v === 'string' ? v : undefined);
      pushRequestLog(ex.ctx, str(level), str(message), { currentLine: typeof line === 'number' ? line : undefined, source: text(source), name: text(name), namewhat: text(namewhat), what: text(what) });
      const detail = { plugin: ex.plugin, phase: ex.phase };
      const written = `[${ex.plugin}] ${str(message)}`;
      if (level === 'warn' || level === 'notice') (ex.logger.warn ?? ex.logger.error)(written, detail);
      else if (level === 'err' || level === 'crit' || level === 'alert' || level === 'emerg') ex.logger.error(written, detail);
    },
    log_set_serialize_value: (key, value) => {
      current().ctx.logValues?.set(str(key), value);
    },
  };
}

function serviceRequestHost(current: Current): HostFunctions {
  const upstream = (name: string) => {
    const ex = current();
    only(ex, `kong.service.request.${name}`, REQUEST_PHASES);
    return ex.ctx.upstream;
  };
  return {
    service_request_set_header: (name, value) => {
      const hv = headerValue(value);
      const up = upstream('set_header');
      if (Array.isArray(hv) && up.setHeaderValues !== undefined) up.setHeaderValues(str(name), hv);
      else up.setHeader(str(name), Array.isArray(hv) ? hv.join(', ') : hv);
    },
    service_request_add_header: (name, value) => {
      const up = upstream('add_header');
      const before = up.forwardedHeader?.(str(name).toLowerCase());
      const values = [...(before === undefined ? [] : Array.isArray(before) ? before : [before as string]), str(value)];
      if (up.setHeaderValues !== undefined) up.setHeaderValues(str(name), values);
      else up.setHeader(str(name), values.join(', '));
    },
    service_request_clear_header: (name) => upstream('clear_header').removeHeader(str(name)),
    service_request_set_headers: (headers) => {
      const up = upstream('set_headers');
      for (const [name, value] of Object.entries(headersArg(headers))) up.setHeader(name, value);
    },
    service_request_set_path: (path) => upstream('set_path').setPath?.(str(path)),
    service_request_set_method: (method) => upstream('set_method').setMethod?.(str(method).toUpperCase()),
    service_request_set_raw_query: (query) => replaceQuery(upstream('set_raw_query').forwardedQuery?.(), new URLSearchParams(str(query))),
    service_request_set_query: (args) => {
      const params = new URLSearchParams();
      if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
        for (const [name, value] of Object.entries(args).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
          for (const v of Array.isArray(value) ? value : [value]) params.append(name, v === true ? '' : str(v as LuaValue));
        }
      }
      replaceQuery(upstream('set_query').forwardedQuery?.(), params);
    },
    service_request_set_raw_body: (body) => upstream('set_raw_body').setBody(Buffer.from(str(body), 'latin1')),
    service_request_set_body: (body) => upstream('set_body').setBody(Buffer.from(JSON.stringify(body ?? {})), 'application/json'),
  };
}

function replaceQuery(target: URLSearchParams | undefined, source: URLSearchParams): void {
  if (target === undefined) return;
  for (const name of [...new Set(target.keys())]) target.delete(name);
  for (const [name, value] of source) target.append(name, value);
}

function ngxOutputHost(current: Current): HostFunctions {
  return {
    ngx_say: (...parts) => {
      current().said.push(parts.map((p) => str(p)).join('') + '\n');
      return 1;
    },
    ngx_print: (...parts) => {
      current().said.push(parts.map((p) => str(p)).join(''));
      return 1;
    },
    ngx_status: (...args) => {
      const ex = current();
      if (args.length > 0) {
        ex.status = Number(args[0]);
        return undefined;
      }
      return ex.status || ex.response?.status || ex.summary?.status || 0;
    },
    ngx_exit: (status) => {
      const ex = current();
      const code = Number(status);
      if (!(code >= 200) || !EXIT_PHASES.includes(ex.phase)) return false;
      if (ex.said.length > 0) ex.exit = { status: code, body: ex.said.join(''), headers: { 'content-type': 'text/plain' } };
      else ex.exit = { status: code, body: code >= 400 ? { message: defaultMessage(code) } : null };
      return true;
    },
    ngx_var_set: (name, value) => {
      const ex = current();
      if (name !== 'args') throw new Error(`unsupported function: ngx.var.${str(name)} (read only)`);
      replaceQuery(ex.ctx.upstream.forwardedQuery?.(), new URLSearchParams(str(value)));
    },
  };
}
