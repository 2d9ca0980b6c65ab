import { Transform } from 'node:stream';
import type protobuf from 'protobufjs';
import type { PluginContext, PluginResponse, UpstreamResponse } from '../contract';
import { Unframer } from '../shared/grpc/frames';
import { decodeToJson } from '../shared/grpc/json-message';
import { protoFailure } from '../shared/grpc/unexpected';
import type { GrpcGatewayConfig } from './schema';
import { findCall, requestBody, TranscodeRefusal, type Call } from './transcode';

const CALL = 'grpc-gateway:call';

/** Kong's answer to a CORS preflight. */
const PREFLIGHT_HEADERS = {
  'Content-Type': 'application/json',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET,POST,PATCH,DELETE',
  'Access-Control-Allow-Headers': 'content-type',
};

/** gRPC status codes as HTTP statuses (google/rpc/code.proto), as Kong maps them; any other is 500. */
const HTTP_STATUS: Record<string, number> = {
  '0': 200,
  '1': 499,
  '2': 500,
  '3': 400,
  '4': 504,
  '5': 404,
  '6': 409,
  '7': 403,
  '8': 429,
  '9': 400,
  '10': 409,
  '11': 400,
  '12': 500,
  '13': 500,
  '14': 503,
  '15': 500,
  '16': 401,
};

/** Access: a preflight is answered; a REST request becomes the RPC its method and path bind to, sent as POST. */
export async function grpcGatewayAccess(ctx: PluginContext, config: GrpcGatewayConfig): Promise<PluginResponse | void> {
  ctx.response?.setHeader('Access-Control-Allow-Origin', '*');
  if (ctx.req.method === 'OPTIONS') return { status: 200, body: 'OK', headers: PREFLIGHT_HEADERS };
  try {
    const call = findCall(ctx.req.method.toLowerCase(), ctx.req.path, config.proto);
    ctx.locals?.set(CALL, call);
    ctx.upstream.setHeader('Content-Type', 'application/grpc');
    ctx.upstream.setHeader('TE', 'trailers');
    ctx.upstream.setBody(requestBody(call, await ctx.req.readBody(), ctx.req.query));
    ctx.upstream.setPath?.(call.binding.rpcPath);
    const query = ctx.upstream.forwardedQuery?.();
    if (query !== undefined) for (const name of [...new Set(query.keys())]) query.delete(name);
    ctx.upstream.setMethod?.('POST');
  } catch (err) {
    if (err instanceof TranscodeRefusal) {
      ctx.runtime.log?.error(`grpc-gateway: ${err.message}`);
      return { status: 400, body: err.message };
    }
    return protoFailure(ctx, 'grpc-gateway', config.proto ?? '', err);
  }
}

/** The RPC's messages as JSON, one object after the other; what is left of an incomplete message goes out as it is. */
function jsonMessages(output: protobuf.Type): Transform {
  const frames = new Unframer();
  return new Transform({
    transform: (chunk: Buffer, _encoding, done) => {
      try {
        const out = frames.push(chunk).map((payload) => JSON.stringify(decodeToJson(output, payload)));
        done(null, out.length === 0 ? undefined : Buffer.from(out.join(''), 'utf8'));
      } catch (err) {
        done(err as Error);
      }
    },
    flush: (done) => done(null, frames.leftover.length > 0 ? frames.leftover : undefined),
  });
}

/** The response: JSON, and an HTTP status from a `grpc-status` the upstream put in its head. */
export function grpcGatewayResponse(ctx: PluginContext, _config: GrpcGatewayConfig, res: UpstreamResponse): void {
  if (ctx.req.method === 'OPTIONS') return;
  const call = ctx.locals?.get(CALL) as Call | undefined;
  if (call !== undefined) res.headers['content-type'] = 'application/json';
  const grpcStatus = res.headers['grpc-status'];
  if (grpcStatus !== undefined) {
    const code = String(Array.isArray(grpcStatus) ? grpcStatus[0] : grpcStatus).trim();
    const status = HTTP_STATUS[code];
    if (status === undefined) ctx.runtime.log?.warn?.(`grpc-gateway: unable to map grpc-status ${code} to an HTTP status code`);
    res.status = status ?? 500;
  }
  if (call !== undefined) res.streamBody?.((body) => body.pipe(jsonMessages(call.binding.output)));
}
