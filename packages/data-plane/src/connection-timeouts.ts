/**
 * The deadlines of client connections on the proxy's listeners (decision 31), in ms, the same for HTTP/1.1 and
 * HTTP/2: request headers within `clientHeader` (Kong's client_header_timeout: else 408 and close; HTTP/2: GOAWAY
 * and close), an idle keep-alive connection closed after `keepAlive` (Kong's keepalive_timeout), a whole request
 * within `request` (Node's requestTimeout). Node looks for connections past them every `checkEvery`.
 */
export interface ConnectionTimeouts {
  clientHeader: number;
  keepAlive: number;
  request: number;
  checkEvery: number;
}

export interface ConnectionTimeoutOptions {
  headersTimeout?: number;
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionsCheckingInterval?: number;
}

export const DEFAULT_CLIENT_HEADER_TIMEOUT = 60_000;
export const DEFAULT_KEEPALIVE_TIMEOUT = 60_000;
/** Node's default for a whole request */
const DEFAULT_REQUEST_TIMEOUT = 300_000;

export function connectionTimeouts(options: ConnectionTimeoutOptions): ConnectionTimeouts {
  const clientHeader = options.headersTimeout ?? DEFAULT_CLIENT_HEADER_TIMEOUT;
  const keepAlive = options.keepAliveTimeout ?? DEFAULT_KEEPALIVE_TIMEOUT;
  const request = options.requestTimeout ?? Math.max(DEFAULT_REQUEST_TIMEOUT, clientHeader);
  // a quarter of the shortest deadline, at most a second: a slow client is cut within 25% of its deadline
  const checkEvery = options.connectionsCheckingInterval ?? Math.max(10, Math.min(1_000, Math.floor(Math.min(clientHeader, request) / 4)));
  return { clientHeader, keepAlive, request, checkEvery };
}
