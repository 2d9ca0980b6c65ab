import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable, pipeline } from 'node:stream';
import type { PluginResponse } from '@gatehouse/plugins';
import { stampGatewayResponse, type ExchangeTrace } from '../observe/exchange-trace';
import { isGrpcExchange, sendGrpcAnswer } from '../grpc/grpc-status';
import { errorBody, errorBodyType, type ErrorBodyType } from './error-bodies';
import { isTimeout } from './forwarder';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A response the gateway itself produces, serialised once. */
export interface FixedResponse {
  status: number;
  body: Buffer;
  headers: Record<string, string>;
}

/** the message of each fixed error, for the bodies negotiated by `Accept` */
const messages = new WeakMap<FixedResponse, string>();

function fixed(status: number, message: string, headers: Record<string, string> = {}): FixedResponse {
  const body = Buffer.from(JSON.stringify({ message }));
  const response = { status, body, headers: { 'content-type': JSON_TYPE, 'content-length': String(body.length), ...headers } };
  messages.set(response, message);
  return response;
}

/** Kong's proxy-side answers, byte for byte. */
export const ProxyErrors = {
  noRoute: fixed(404, 'no Route matched with those values'),
  noService: fixed(503, 'no Service found with those values'),
  badGateway: fixed(502, 'An invalid response was received from the upstream server'),
  gatewayTimeout: fixed(504, 'The upstream server is timing out'),
  unexpected: fixed(500, 'An unexpected error occurred'),
  /** a path that climbs above `/` or hides a dot segment (decision 12) */
  badRequest: fixed(400, 'Bad request'),
  noHealthyTarget: fixed(503, 'failure to get a peer from the ring-balancer'),
  /** the service's host name has no address (Kong's balancer, when its DNS lookup finds no record) */
  nameNotResolved: fixed(503, 'name resolution failed'),
  useHttps: fixed(426, 'Please use HTTPS protocol', { connection: 'Upgrade', upgrade: 'TLS/1.2, HTTP/1.1' }),
};

/** the type of an error body when the request has no `Accept` (GATEHOUSE_ERROR_DEFAULT_TYPE); set once per process */
let errorDefaultType: ErrorBodyType = 'application/json';

export function setErrorDefaultType(type: ErrorBodyType): void {
  errorDefaultType = type;
}

/** A fixed answer in the body type the request accepts (HTML, XML, plain text; JSON as built). */
function negotiated(res: ServerResponse, response: FixedResponse): FixedResponse {
  const message = messages.get(response);
  if (message === undefined || response.status < 400) return response;
  const type = errorBodyType(res.req?.headers.accept, errorDefaultType);
  const requestId = res.getHeader('x-kong-request-id');
  const text = errorBody(type, message, typeof requestId === 'string' ? requestId : '');
  if (text === null) return response;
  const body = Buffer.from(text);
  return { status: response.status, body, headers: { ...response.headers, 'content-type': `${type}; charset=utf-8`, 'content-length': String(body.length) } };
}

export function sendFixed(res: ServerResponse, response: FixedResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (isGrpcExchange(res.req)) return sendGrpcAnswer(res, response.status, response.headers, response.body);
  const answer = negotiated(res, response);
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}

/** the lookup's codes for a host name that has no address: no such name, or no record of the family asked */
const NAME_NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA']);

/** Kong's answer for an upstream failure: 504 on a timeout, 503 for a host name without an address, 502 otherwise */
function upstreamFailureAnswer(failure: Error | 'timeout' | null): FixedResponse {
  if (failure === 'timeout' || isTimeout(failure)) return ProxyErrors.gatewayTimeout;
  const code = (failure as { code?: unknown } | null)?.code;
  return typeof code === 'string' && NAME_NOT_FOUND.has(code) ? ProxyErrors.nameNotResolved : ProxyErrors.badGateway;
}

/**
 * The gateway's answer when the upstream failed before its response started (see `upstreamFailureAnswer`): `failure`
 * is the error, `'timeout'` for a deadline the gateway enforced, null when nothing more is known. Like every answer
 * the gateway makes after the plugins ran, it carries the headers they set for the client's response (cors's, for
 * instance), as Kong runs its header filters on its own error pages.
 */
export function sendUpstreamFailure(res: ServerResponse, failure: Error | 'timeout' | null, trace: ExchangeTrace | null | undefined, pluginHeaders: ReadonlyMap<string, string> | null): void {
  if (pluginHeaders !== null && !res.headersSent) for (const [name, value] of pluginHeaders) res.setHeader(name, value);
  stampGatewayResponse(res, trace);
  sendFixed(res, upstreamFailureAnswer(failure));
}

/**
 * Plugin responses are often the same object every time (a refusal built once per config): each body object is
 * serialised once. A plugin must not change a body object after returning it.
 */
const serialised = new WeakMap<object, Buffer>();

function bodyBytes(body: unknown): { bytes: Buffer | null; json: boolean } {
  if (body === null || body === undefined) return { bytes: null, json: false };
  if (Buffer.isBuffer(body)) return { bytes: body, json: false };
  if (typeof body === 'string') return { bytes: Buffer.from(body), json: false };
  if (typeof body === 'object') {
    let bytes = serialised.get(body);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(body));
      serialised.set(body, bytes);
    }
    return { bytes, json: true };
  }
  return { bytes: Buffer.from(JSON.stringify(body)), json: true };
}

/** Raw form of a plugin response: status, header list and body bytes. A 204 has neither body nor Content-Length (RFC 9110 §8.6). */
export function renderPluginResponse(response: PluginResponse): { status: number; headers: Record<string, string | string[]>; body: Buffer | null } {
  const noContent = response.status === 204;
  const { bytes, json } = noContent ? { bytes: null, json: false } : bodyBytes(response.body);
  const headers: Record<string, string | string[]> = {};
  if (json) headers['content-type'] = JSON_TYPE;
  if (response.headers) for (const name in response.headers) headers[name.toLowerCase()] = response.headers[name]!;
  if (response.setCookies !== undefined && response.setCookies.length > 0) headers['set-cookie'] = [...response.setCookies];
  if (noContent) delete headers['content-length'];
  else headers['content-length'] = String(bytes?.length ?? 0);
  return { status: response.status, headers, body: bytes };
}

export function sendPluginResponse(res: ServerResponse, response: PluginResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (response.body instanceof Readable) return streamPluginResponse(res, response, response.body);
  const { status, headers, body } = renderPluginResponse(response);
  if (isGrpcExchange(res.req)) return sendGrpcAnswer(res, status, headers, body);
  res.writeHead(status, headers);
  res.end(body ?? undefined);
}

/** A plugin's answer whose body is a stream (ai-proxy's translated events): relayed as it comes, never buffered. */
function streamPluginResponse(res: ServerResponse, response: PluginResponse, body: Readable): void {
  const headers: Record<string, string> = {};
  if (response.headers) for (const name in response.headers) headers[name.toLowerCase()] = response.headers[name]!;
  delete headers['content-length'];
  res.writeHead(response.status, headers);
  // either side failing ends both: a client gone stops the plugin's source, a source failing cuts the response
  pipeline(body, res, () => undefined);
}

const STATUS_TEXT: Record<number, string> = { 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 426: 'Upgrade Required', 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };

/** Answers on a raw socket (an upgrade request that never reaches the upstream), then closes it. */
export function sendOnSocket(socket: Socket, status: number, headers: Record<string, string | string[]>, body: Buffer | null): void {
  if (socket.destroyed) return;
  let head = `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n`;
  for (const name in headers) {
    if (name === 'connection') continue;
    const value = headers[name]!;
    for (const line of typeof value === 'string' ? [value] : value) head += `${name}: ${line}\r\n`;
  }
  head += 'connection: close\r\n\r\n';
  socket.end(body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : head);
}
