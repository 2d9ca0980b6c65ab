import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The gateway's own answers to gRPC requests, as Kong's `kong.response.exit` gives them: the HTTP status kept, a
 * `grpc-status` mapped from it, the message in `grpc-message`, `content-type: application/grpc`, no body, all in one
 * HEADERS frame that ends the stream (a gRPC "trailers-only" response, which clients read as the call's status).
 */

/** Kong's HTTP status → gRPC status table (kong/pdk/response.lua). */
const HTTP_TO_GRPC: Readonly<Record<number, number>> = {
  200: 0,
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  409: 6,
  429: 8,
  499: 1,
  500: 13,
  501: 12,
  503: 14,
  504: 4,
};

/** Kong's names of the gRPC statuses, the `grpc-message` when an answer has no message of its own. */
const GRPC_NAMES = ['OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied', 'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated'];

export const GRPC_DEADLINE_EXCEEDED = 4;

export function grpcStatusOf(httpStatus: number): number {
  const mapped = HTTP_TO_GRPC[httpStatus];
  if (mapped !== undefined) return mapped;
  if (httpStatus >= 500 && httpStatus <= 599) return 13;
  if (httpStatus >= 400 && httpStatus <= 499) return 3;
  if (httpStatus >= 200 && httpStatus <= 299) return 0;
  return 2;
}

/** Whether the request was made over HTTP/2 with a gRPC content type: its answers then take the gRPC form. */
export function isGrpcExchange(req: IncomingMessage | undefined): boolean {
  if (req === undefined || req.httpVersionMajor !== 2) return false;
  const type = req.headers['content-type'];
  return typeof type === 'string' && type.startsWith('application/grpc');
}

/** gRPC's `grpc-message` encoding: printable ASCII as is, `%` and everything else percent-encoded (UTF-8). */
function percentEncoded(message: string): string {
  return message.replace(/[^\x20-\x24\x26-\x7e]+/gu, (run) => encodeURIComponent(run));
}

/** The message a JSON body `{message}` carries, else null. */
function messageOf(body: Buffer | null): string | null {
  if (body === null || body.length === 0) return null;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (parsed !== null && typeof parsed === 'object' && typeof (parsed as { message?: unknown }).message === 'string') return (parsed as { message: string }).message;
  } catch {
    return body.toString('utf8');
  }
  return null;
}

/**
 * Sends the gateway's answer (status, headers, JSON body) to a gRPC client in Kong's gRPC form. A response already
 * gRPC (its content type says so) keeps its body.
 */
export function sendGrpcAnswer(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: Buffer | null): void {
  const lower: Record<string, string> = {};
  // several values of one header (Set-Cookie) are joined: gRPC answers carry no cookies a client reads
  for (const name in headers) {
    const value = headers[name]!;
    lower[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (lower['content-type']?.startsWith('application/grpc')) {
    res.writeHead(status, lower);
    res.end(body ?? undefined);
    return;
  }
  const code = lower['grpc-status'] !== undefined ? Number(lower['grpc-status']) : grpcStatusOf(status);
  delete lower.connection;
  delete lower.upgrade;
  lower['content-type'] = 'application/grpc';
  lower['content-length'] = '0';
  lower['grpc-status'] = String(code);
  lower['grpc-message'] ??= percentEncoded(messageOf(body) ?? GRPC_NAMES[code] ?? 'Unknown');
  for (const name in lower) res.setHeader(name, lower[name]!);
  res.statusCode = status;
  // no writeHead: end() then sends the head with END_STREAM (trailers-only)
  res.end();
}
