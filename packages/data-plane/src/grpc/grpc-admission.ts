import type { IncomingMessage } from 'node:http';
import type { CompiledRoute } from '../compile/types';
import type { FixedResponse } from '../proxy/responses';

/**
 * Kong's checks of a request that matched a `grpc`/`grpcs` route (kong/runloop/handler.lua, access phase): a request
 * that is not gRPC gets 415, gRPC over HTTP/1 gets 426, gRPC in clear text on a `grpcs`-only route a gRPC error.
 */

function jsonAnswer(status: number, message: string, headers: Record<string, string> = {}): FixedResponse {
  const body = Buffer.from(JSON.stringify({ message }));
  return { status, body, headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), ...headers } };
}

const NOT_GRPC = jsonAnswer(415, 'Non-gRPC request matched gRPC route');
const USE_HTTP2 = jsonAnswer(426, 'Please use HTTP2 protocol', { connection: 'Upgrade', upgrade: 'HTTP/2' });
const GRPCS_ONLY: FixedResponse = {
  status: 200,
  body: Buffer.alloc(0),
  headers: { 'content-type': 'application/grpc', 'grpc-status': '1', 'grpc-message': 'gRPC request matched gRPCs route' },
};

/** Whether the request carries gRPC (`content-type: application/grpc…`). */
export function isGrpcRequest(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  return typeof type === 'string' && type.startsWith('application/grpc');
}

/** The gateway's answer when a gRPC route cannot take this request; null when it can. */
export function grpcRouteRefusal(route: CompiledRoute, req: IncomingMessage, scheme: string): FixedResponse | null {
  if (!isGrpcRequest(req)) return NOT_GRPC;
  if (req.httpVersionMajor !== 2) return USE_HTTP2;
  if (scheme !== 'https' && !route.route.protocols.includes('grpc')) return GRPCS_ONLY;
  return null;
}
