import type { PluginContext, PluginResponse, UpstreamResponse } from '../contract';
import { strippedPath } from '../shared/grpc/stripped-path';
import { protoFailure } from '../shared/grpc/unexpected';
import { DecodeRefusal, GrpcWebCodec } from './codec';
import type { GrpcWebConfig } from './schema';

const CODEC = 'grpc-web:codec';

/** Kong's answer to a CORS preflight: 200 `OK`, whatever the route. */
const PREFLIGHT_HEADERS = {
  'Content-Type': 'application/grpc-web-text+proto',
  'Access-Control-Allow-Methods': 'POST',
  'Access-Control-Allow-Headers': 'content-type,x-grpc-web,x-user-agent',
};

function headerValue(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/**
 * Access: a preflight is answered; any other request becomes a gRPC call (Content-Type `application/grpc`, the body
 * decoded from base64 and JSON as its Content-Type says). The path upstream is the client's, or, with
 * `pass_stripped_path`, the one the route's `strip_path` leaves.
 */
export async function grpcWebAccess(ctx: PluginContext, config: GrpcWebConfig): Promise<PluginResponse | void> {
  const origin = config.allow_origin_header;
  if (origin !== null) ctx.response?.setHeader('Access-Control-Allow-Origin', origin);
  if (ctx.req.method === 'OPTIONS') {
    return { status: 200, body: 'OK', headers: { ...PREFLIGHT_HEADERS, ...(origin !== null ? { 'Access-Control-Allow-Origin': origin } : {}) } };
  }
  let path: string;
  if (config.pass_stripped_path === true) {
    path = strippedPath(ctx.route, ctx.req.path);
  } else {
    path = ctx.req.path;
    ctx.upstream.setPath?.(path);
  }
  let codec: GrpcWebCodec | string;
  try {
    codec = GrpcWebCodec.create(headerValue(ctx.req.headers['content-type']), path, config.proto);
  } catch (err) {
    return protoFailure(ctx, 'grpc-web', config.proto ?? '', err);
  }
  if (typeof codec === 'string') {
    ctx.runtime.log?.error(`grpc-web: ${codec}`);
    return { status: 400, body: codec };
  }
  ctx.locals?.set(CODEC, codec);
  ctx.upstream.setHeader('Content-Type', 'application/grpc');
  ctx.upstream.setHeader('TE', 'trailers');
  try {
    ctx.upstream.setBody(codec.upstream(await ctx.req.readBody()));
  } catch (err) {
    if (!(err instanceof DecodeRefusal)) throw err;
    return { status: 400, body: err.message };
  }
}

/** The response gets the client's Content-Type back, and its messages and trailers in gRPC-Web's form. */
export function grpcWebResponse(ctx: PluginContext, _config: GrpcWebConfig, res: UpstreamResponse): void {
  if (ctx.req.method === 'OPTIONS') return;
  const codec = ctx.locals?.get(CODEC);
  if (!(codec instanceof GrpcWebCodec)) return;
  if (codec.mimetype !== '') res.headers['content-type'] = codec.mimetype;
  if (ctx.req.method !== 'POST') return;
  res.streamBody?.((body, trailers) => body.pipe(codec.downstream(trailers)));
}
