import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UpstreamRequest } from './upstream-request';

/**
 * Sends one prepared request upstream and streams the answer back to the client. A forwarder owns its connection
 * pools and answers upstream failures itself: 504 on a timeout, 502 on any other failure before the response
 * started; after that the client connection is cut.
 */
export interface Forwarder {
  readonly name: string;
  forward(req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest): void;
  /** closes the pools of upstreams no longer in `active` (pool keys), once their requests in flight are done */
  prune?(active: ReadonlySet<string>): void;
  close(): Promise<void>;
}

export type ForwarderKind = 'undici' | 'http-proxy';

/** Upstream response headers that are about the upstream connection, not the response. */
export const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'ESOCKETTIMEDOUT']);

export function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TIMEOUT_CODES.has(code);
}
