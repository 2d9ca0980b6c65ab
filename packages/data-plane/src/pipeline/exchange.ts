import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { Consumer, LinearRegex, RegexCaptures, Route, Service } from '@gatehouse/core';
import {
  BodyTooLargeError,
  DEFAULT_MAX_BUFFERED_BODY,
  readLimitedBody,
  type CredentialRef,
  type PluginRequest,
  type RequestConnection,
  type PluginRuntime,
  type RequestSpans,
  type ResponseChanges,
  type UpstreamChanges,
} from '@gatehouse/plugins';
import type { CompiledConfig, CompiledRoute } from '../compile/types';
import type { ExchangeTrace } from '../observe/exchange-trace';
import { lingerOn } from '../proxy/lingering-close';
import type { ConnectionCount } from '../proxy/connection-count';
import type { ChainState, ResponseStep } from './run-chain';


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
  /** the route's regex path that matched this request, if it was one */
  pathPattern: LinearRegex | null = null;
  /** the most the gateway buffers of this request's body (GATEHOUSE_MAX_BUFFERED_BODY) */
  bodyLimit = DEFAULT_MAX_BUFFERED_BODY;

  /** header names (lower-case) a plugin removed, and headers it set; applied when the upstream request is built */
  removedHeaders: Set<string> | null = null;
  setHeaders: Map<string, string | readonly string[]> | null = null;
  /** for set headers whose name a plugin spelled with capitals: lower-case name → that spelling */
  setHeaderNames: Map<string, string> | null = null;
  /** the forwarded query once a plugin asked to edit it; it then replaces the client's */
  editedQuery: URLSearchParams | null = null;
  /** method and path for the upstream when a plugin changed them */
  upstreamMethod: string | null = null;
  upstreamPathOverride: string | null = null;
  /** the client's body behind the wrappers plugins added (pipeBody); null = the client's stream itself */
  bodySource: Readable | null = null;
  /** plugin configurations with a response hook that ran on this request, in order */
  responseSteps: ResponseStep[] | null = null;
  private localValues: Map<string, unknown> | null = null;
  /** values plugins added to the log entries; null while none */
  logValueMap: Map<string, unknown> | null = null;
  /** this request's connection numbers (correlation-id's tracker); null when the caller keeps none */
  connectionCount: ConnectionCount | null = null;
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

  /** the request's spans (tracing instrumentations on), else null */
  get spans(): RequestSpans | null {
    return this.trace?.spans ?? null;
  }

  get locals(): Map<string, unknown> {
    return (this.localValues ??= new Map());
  }

  get logValues(): Map<string, unknown> {
    return (this.logValueMap ??= new Map());
  }

  get connection(): RequestConnection | undefined {
    const count = this.connectionCount;
    if (count === null) return undefined;
    const socket = this.incoming.socket;
    const address = socket.localAddress ?? '';
    return { localAddress: address.startsWith('::ffff:') ? address.slice(7) : address, localPort: socket.localPort ?? 0, serial: count.serial, requests: count.requests };
  }

  get rawHeaders(): readonly string[] {
    return this.incoming.rawHeaders;
  }

  /** `1.0`, `1.1` or `2.0` */
  get httpVersion(): string {
    return this.incoming.httpVersion;
  }

  /** the port of the listener the request came in on (Kong's `server_port`) */
  get serverPort(): number {
    return this.incoming.socket.localPort ?? 0;
  }

  get uriCaptures(): RegexCaptures {
    return this.pathPattern?.captures(this.path) ?? { unnamed: [], named: {} };
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }

  /**
   * Buffers the body once (through the plugins' wrappers), up to `bodyLimit` bytes; past it the read rejects with a BodyTooLargeError (answered 413)
   * and the rest of the body is discarded while it keeps coming (lingering close), within limits.
   */
  readBody(): Promise<Buffer> {
    if (this.bodyRead) return this.bodyRead;
    // a plugin's stream wrapper (request-size-limiting, transformers) changes the body: its declared length no longer holds
    const source = this.bodySource ?? this.incoming;
    const declared = this.bodySource === null ? this.headers['content-length'] : undefined;
    this.bodyRead = readLimitedBody(source, this.bodyLimit, declared).then(
      (buffered) => {
        if (!this.bodyReplaced) this.body = buffered;
        return buffered;
      },
      (err: unknown) => {
        // the rest is discarded while the client goes on sending it, within nginx's lingering limits; HTTP/2
        // streams end with RST_STREAM NO_ERROR after their answer instead
        if (err instanceof BodyTooLargeError && this.incoming.httpVersionMajor === 1) lingerOn(this.incoming.socket, this.incoming);
        throw err;
      },
    );
    return this.bodyRead;
  }

  pipeBody(wrap: (body: Readable) => Readable): void {
    if (this.bodyRead !== null) return;
    this.bodySource = wrap(this.bodySource ?? this.incoming);
  }

  setMethod(method: string): void {
    this.upstreamMethod = method;
  }

  setPath(path: string): void {
    this.upstreamPathOverride = path;
  }

  forwardedHeader(name: string): string | readonly string[] | undefined {
    const lower = name.toLowerCase();
    const set = this.setHeaders?.get(lower);
    if (set !== undefined) return set;
    if (this.removedHeaders?.has(lower)) return undefined;
    return this.headers[lower];
  }

  forwardedQuery(): URLSearchParams {
    return (this.editedQuery ??= new URLSearchParams(this.rawQuery));
  }

  setHeader(name: string, value: string | readonly string[]): void {
    const lower = name.toLowerCase();
    this.removedHeaders?.delete(lower);
    (this.setHeaders ??= new Map()).set(lower, value);
    // sent upstream as the plugin spelled it (Kong keeps a configured header name's case)
    if (name !== lower) (this.setHeaderNames ??= new Map()).set(lower, name);
    else this.setHeaderNames?.delete(lower);
  }

  setHeaderValues(name: string, values: readonly string[]): void {
    this.setHeader(name, values.length === 1 ? values[0]! : values);
  }

  removeHeader(name: string): void {
    const lower = name.toLowerCase();
    this.setHeaders?.delete(lower);
    this.setHeaderNames?.delete(lower);
    (this.removedHeaders ??= new Set()).add(lower);
  }

  /**
   * Kong's `clear_query_arg`: the query string is parsed and serialised again without `name` (WHATWG
   * form-urlencoding, order kept), whether or not it held `name`.
   */
  removeQueryArg(name: string): void {
    this.forwardedQuery().delete(name);
  }

  setBody(body: Buffer, contentType?: string): void {
    this.body = body;
    this.bodyReplaced = true;
    if (contentType !== undefined) this.bodyContentType = contentType;
  }

  /** The query string forwarded upstream: the client's as sent, unless a plugin edited it. */
  upstreamQuery(): string {
    return this.editedQuery !== null ? this.editedQuery.toString() : this.rawQuery;
  }
}
