import type { Readable } from 'node:stream';
import type { Consumer, Route } from '@gatehouse/core';
import type { ExchangeSummary, PluginContext, PluginRuntime, UpstreamResponse } from '../../src/contract';

/** What a fake request context recorded: the upstream changes and the client response headers plugins made. */
export interface Recorded {
  headers: Map<string, string | readonly string[] | null>;
  query: URLSearchParams | null;
  body: Buffer | null;
  method: string | null;
  path: string | null;
  wrappers: Array<(body: Readable) => Readable>;
  response: Map<string, string>;
}

export interface FakeRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string | string[]>;
  query?: string;
  body?: string;
  clientIp?: string;
  consumer?: Consumer | null;
  /** the consumer is the anonymous one an authentication plugin fell back to */
  anonymous?: boolean;
  route?: Route | null;
  runtime?: PluginRuntime;
}

/** A plugin context for unit tests, recording what the plugin changed. */
export function fakeContext(request: FakeRequest = {}): { ctx: PluginContext; recorded: Recorded } {
  const headers = request.headers ?? {};
  const recorded: Recorded = { headers: new Map(), query: null, body: null, method: null, path: null, wrappers: [], response: new Map() };
  const ctx: PluginContext = {
    req: {
      method: request.method ?? 'GET',
      path: request.path ?? '/',
      headers,
      query: new URLSearchParams(request.query ?? ''),
      clientIp: request.clientIp ?? '127.0.0.1',
      scheme: 'http',
      readBody: async () => Buffer.from(request.body ?? ''),
    },
    upstream: {
      setHeader: (name, value) => void recorded.headers.set(name.toLowerCase(), value),
      setHeaderValues: (name, values) => void recorded.headers.set(name.toLowerCase(), values),
      removeHeader: (name) => void recorded.headers.set(name.toLowerCase(), null),
      removeQueryArg: (name) => (recorded.query ??= new URLSearchParams(request.query ?? '')).delete(name),
      setBody: (body) => void (recorded.body = body),
      forwardedHeader: (name) => {
        const set = recorded.headers.get(name);
        return set === null ? undefined : (set ?? headers[name]);
      },
      forwardedQuery: () => (recorded.query ??= new URLSearchParams(request.query ?? '')),
      setMethod: (method) => void (recorded.method = method),
      setPath: (path) => void (recorded.path = path),
      pipeBody: (wrap) => void recorded.wrappers.push(wrap),
    },
    route: request.route ?? null,
    service: null,
    consumer: request.consumer ?? null,
    credential: null,
    anonymous: request.anonymous ?? false,
    index: undefined,
    runtime: request.runtime ?? {},
    pluginId: '99999999-9999-4999-8999-999999999999',
    response: { setHeader: (name, value) => void recorded.response.set(name.toLowerCase(), value) },
    locals: new Map(),
    logValues: new Map(),
  };
  return { ctx, recorded };
}

/** An upstream response for unit tests of response hooks; `finish` runs the body transforms and captures. */
export function fakeResponse(status: number, headers: Record<string, string | string[]>, body = ''): UpstreamResponse & { finish(): Buffer } {
  const transforms: Array<(body: Buffer) => Buffer | Promise<Buffer>> = [];
  const captures: Array<(body: Buffer) => void> = [];
  return {
    status,
    headers: { ...headers },
    transformBody: (t) => void transforms.push(t),
    captureBody: (c) => void captures.push(c),
    finish() {
      let out: Buffer = Buffer.from(body);
      for (const t of transforms) {
        const next = t(out);
        if (next instanceof Promise) throw new Error('a transform answered with a promise: unit-test it through its own function');
        out = next;
      }
      for (const c of captures) c(out);
      return out;
    },
  };
}

/** A finished exchange for unit tests of log hooks: a 200 from the upstream unless `overrides` say otherwise. */
export function fakeSummary(overrides: Partial<ExchangeSummary> = {}): ExchangeSummary {
  return {
    requestId: '0'.repeat(32),
    startedAt: Date.now(),
    clientIp: '127.0.0.1',
    method: 'GET',
    url: 'http://gateway.test/',
    path: '/',
    rawQuery: '',
    requestHeaders: {},
    requestSize: 0,
    status: 200,
    responseHeaders: {},
    responseSize: 0,
    source: 'service',
    latencies: { kong: 1, proxy: 1, request: 2 },
    route: null,
    service: null,
    consumer: null,
    credential: null,
    upstreamUri: '/',
    upstreamTarget: { host: '127.0.0.1', port: 80 },
    completed: true,
    ...overrides,
  };
}

/** The rest of a plugin context for a request no plugin has authenticated yet, outside any route or service. */
export function unauthenticated(): Pick<PluginContext, 'route' | 'service' | 'consumer' | 'credential' | 'anonymous' | 'runtime'> {
  return { route: null, service: null, consumer: null, credential: null, anonymous: false, runtime: {} };
}
