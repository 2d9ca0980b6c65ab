import type { LlhttpError } from '@gatehouse/core';

/**
 * A failure of the upstream exchange. The codes are undici's, so that what reads them (504 on a timeout, the balancer's
 * retry on a connection error, passive health) treats both clients alike.
 */
export class UpstreamClientError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'UpstreamClientError';
  }
}

export const otherSideClosed = (): UpstreamClientError => new UpstreamClientError('other side closed', 'UND_ERR_SOCKET');
export const connectTimeout = (): UpstreamClientError => new UpstreamClientError('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT');
export const headersTimeout = (): UpstreamClientError => new UpstreamClientError('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT');
export const bodyTimeout = (): UpstreamClientError => new UpstreamClientError('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT');
export const badUpgrade = (): UpstreamClientError => new UpstreamClientError('bad upgrade', 'UND_ERR_SOCKET');

/** A response llhttp refused (bad framing, both Content-Length and Transfer-Encoding, …): never retried, 502. */
export function invalidResponse(err: LlhttpError): UpstreamClientError {
  return new UpstreamClientError(`invalid upstream response: ${err.reason ?? err.message}`, err.code);
}

/** Errors that mean a kept-alive connection was closed under the request (the race RFC 9112 §9.3.1 describes). */
export function isConnectionLoss(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}
