import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UpstreamRequest } from './upstream-request';

/**
 * Sends one prepared request upstream and streams the answer back to the client. A forwarder owns its connection
 * pools and answers upstream failures itself: 504 on a timeout, 502 on any other failure before the response
 * started; after that the client connection is cut.
 */
export interface Forwarder {
  readonly name: string;
  /** `observer` (balanced requests) hears how the attempt went and may give a retry at another target */
  forward(req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest, observer?: ForwardObserver | null): void;
  /** closes the pools of upstreams no longer in `active` (pool keys), once their requests in flight are done */
  prune?(active: ReadonlySet<string>): void;
  close(): Promise<void>;
}

/** What a balanced request learns from its upstream exchange: passive health, load, latency, retries. */
export interface ForwardObserver {
  /** the upstream answered with this status (response headers arrived) */
  onResponse(status: number): void;
  /** the exchange ended after a response started (complete, or cut) */
  onEnd(): void;
  /**
   * the attempt failed before any response; returns the request for the next attempt, or null to answer the client
   * with 502/504. `replayable` is false when the request body was a stream that cannot be sent again.
   */
  onFailure(err: Error, replayable: boolean): UpstreamRequest | null;
}

export type ForwarderKind = 'http1' | 'undici' | 'http-proxy';

/** Upstream response headers that are about the upstream connection, not the response. */
export const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'ESOCKETTIMEDOUT']);

export function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TIMEOUT_CODES.has(code);
}
