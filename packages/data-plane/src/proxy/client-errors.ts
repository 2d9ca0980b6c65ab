import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * What the proxy answers on a connection whose request Node could not take (its `clientError` event), in Kong's shape:
 *   - headers past Node's size limit (`HPE_HEADER_OVERFLOW`): 431;
 *   - a client too slow to send its headers or its request (`headersTimeout`, `requestTimeout`;
 *     `ERR_HTTP_REQUEST_TIMEOUT`): 408;
 *   - anything else (a malformed request): 400.
 * The connection is closed after the answer.
 */
function raw(status: number, reason: string, message: string): string {
  const body = JSON.stringify({ message });
  return (
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `connection: close\r\n\r\n${body}`
  );
}

const HEADERS_TOO_LARGE = raw(431, 'Request Header Fields Too Large', 'Request header or cookie too large');
const REQUEST_TIMEOUT = raw(408, 'Request Timeout', 'Request timeout');
const BAD_REQUEST = raw(400, 'Bad Request', 'Bad request');

export function clientErrorResponse(err: Error): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'HPE_HEADER_OVERFLOW') return HEADERS_TOO_LARGE;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return REQUEST_TIMEOUT;
  return BAD_REQUEST;
}

/**
 * The listeners' `clientError` handler: an HTTP error (the parser's `HPE_*`, Node's `ERR_HTTP_*` timeouts) is answered
 * on a socket still open for writing; anything else (a reset, a failed TLS handshake) just closes it.
 */
export function answerClientError(err: Error, socket: Duplex): void {
  const code = (err as { code?: unknown }).code;
  const http = typeof code === 'string' && (code.startsWith('HPE_') || code.startsWith('ERR_HTTP_'));
  if (http && (socket as Socket).writable) socket.end(clientErrorResponse(err));
  else socket.destroy();
}
