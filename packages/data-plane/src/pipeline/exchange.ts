import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Consumer, Route, Service } from '@gatehouse/core';
import type { CredentialRef, PluginRequest, PluginRuntime, ResponseChanges, UpstreamChanges } from '@gatehouse/plugins';
import type { CompiledConfig, CompiledRoute } from '../compile/types';
import type { ExchangeTrace } from '../observe/exchange-trace';
import type { ChainState } from './run-chain';

/**
 * One proxied request: what plugins read (the request), what they change (the upstream request) and what
 * authentication decided. One object per request; the query string is parsed and the body read only when a plugin
 * asks for them. Plugins run one after another, so `index` is the current plugin's while its hook runs.
 */
export class Exchange implements ChainState, PluginRequest, UpstreamChanges {
  readonly method: string;
  readonly path: string;
  /** the query string without its `?`; '' when there is none */
  readonly rawQuery: string;
  readonly headers: IncomingHttpHeaders;
  readonly clientIp: string;
  readonly scheme: string;
  readonly route: Route;
  readonly service: Service | null;
  readonly runtime: PluginRuntime;
  /** the configuration this request started with, kept to its end */
  readonly config: CompiledConfig;
  readonly compiledRoute: CompiledRoute;
  /** the part of the path the route matched (what strip_path removes) */
  readonly matched: string;

  consumer: Consumer | null = null;
  credential: CredentialRef | null = null;
  anonymous = false;
  index: unknown = undefined;
  /** the plugin configuration whose hook runs now */
  pluginId: string | undefined = undefined;
  /** the connection came from one of the data plane's trusted proxies */
  fromTrustedProxy = false;

  /** header names (lower-case) a plugin removed, and headers it set; applied when the upstream request is built */
  removedHeaders: Set<string> | null = null;
  setHeaders: Map<string, string> | null = null;
  removedQueryArgs: string[] | null = null;
  /** the body as read by a plugin, or as a plugin replaced it; null = stream the client's body */
  body: Buffer | null = null;
  bodyReplaced = false;
  bodyContentType: string | null = null;
  /** headers plugins set on the client's response (lower-case names), applied to whatever response is sent */
  responseHeaders: Map<string, string> | null = null;
  /** request id and timings (latency headers, logs, metrics); null when the caller keeps none */
  trace: ExchangeTrace | null = null;

  private parsedQuery: URLSearchParams | null = null;
  private bodyRead: Promise<Buffer> | null = null;
  private responseChanges: ResponseChanges | null = null;

  constructor(
    readonly incoming: IncomingMessage,
    path: string,
    rawQuery: string,
    scheme: string,
    clientIp: string,
    config: CompiledConfig,
    compiledRoute: CompiledRoute,
    matched: string,
    runtime: PluginRuntime,
  ) {
    this.method = incoming.method ?? 'GET';
    this.headers = incoming.headers;
    this.path = path;
    this.rawQuery = rawQuery;
    this.scheme = scheme;
    this.clientIp = clientIp;
    this.config = config;
    this.compiledRoute = compiledRoute;
    this.matched = matched;
    this.route = compiledRoute.route;
    this.service = compiledRoute.service;
    this.runtime = runtime;
  }

  get req(): PluginRequest {
    return this;
  }

  get upstream(): UpstreamChanges {
    return this;
  }

  get response(): ResponseChanges {
    return (this.responseChanges ??= {
      setHeader: (name, value) => void (this.responseHeaders ??= new Map()).set(name.toLowerCase(), value),
    });
  }

  get rawHeaders(): readonly string[] {
    return this.incoming.rawHeaders;
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }

  readBody(): Promise<Buffer> {
    if (this.bodyRead) return this.bodyRead;
    this.bodyRead = new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const incoming = this.incoming;
      if (incoming.readableEnded) return resolve(Buffer.alloc(0));
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.once('end', () => {
        const buffered = Buffer.concat(chunks);
        if (!this.bodyReplaced) this.body = buffered;
        resolve(buffered);
      });
      incoming.once('error', reject);
    });
    return this.bodyRead;
  }

  setHeader(name: string, value: string): void {
    const lower = name.toLowerCase();
    this.removedHeaders?.delete(lower);
    (this.setHeaders ??= new Map()).set(lower, value);
  }

  removeHeader(name: string): void {
    const lower = name.toLowerCase();
    this.setHeaders?.delete(lower);
    (this.removedHeaders ??= new Set()).add(lower);
  }

  removeQueryArg(name: string): void {
    (this.removedQueryArgs ??= []).push(name);
  }

  setBody(body: Buffer, contentType?: string): void {
    this.body = body;
    this.bodyReplaced = true;
    if (contentType !== undefined) this.bodyContentType = contentType;
  }

  /** The query string forwarded upstream: the client's, minus the arguments plugins removed, order kept. */
  upstreamQuery(): string {
    const removed = this.removedQueryArgs;
    if (removed === null || this.rawQuery === '') return this.rawQuery;
    return this.rawQuery
      .split('&')
      .filter((pair) => {
        const eq = pair.indexOf('=');
        const rawName = eq < 0 ? pair : pair.slice(0, eq);
        let name: string;
        try {
          name = decodeURIComponent(rawName.replace(/\+/g, ' '));
        } catch {
          name = rawName;
        }
        return !removed.includes(name);
      })
      .join('&');
  }
}
