import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { RequestRefused, type PluginContext, type PluginResponse } from '../contract';
import { REQUEST_TOO_LARGE } from '../shared/limited-body';
import { SIZE_UNITS, type RequestSizeLimitingConfig } from './schema';

/** Kong answers 417 instead of 413 when the client waits for `100 Continue`. */
const EXPECTATION_FAILED: PluginResponse = Object.freeze({ status: 417, body: Object.freeze({ message: 'Request size limit exceeded' }) });
const LENGTH_REQUIRED: PluginResponse = Object.freeze({ status: 411, body: Object.freeze({ message: 'A valid Content-Length header is required' }) });

function tooLarge(ctx: PluginContext): PluginResponse {
  const expect = ctx.req.headers.expect;
  return typeof expect === 'string' && expect.trim().toLowerCase() === '100-continue' ? EXPECTATION_FAILED : REQUEST_TOO_LARGE;
}

/** Counts a body as it streams; past `limit` bytes the stream fails with the refusal, before the excess is sent on. */
export class SizeLimit extends Transform {
  private seen = 0;

  constructor(
    private readonly limit: number,
    private readonly refusal: PluginResponse,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) return done(new RequestRefused(this.refusal));
    done(null, chunk);
  }
}

/** The body is sent chunked: `chunked` is the last transfer coding (what Node accepts as a body without a length). */
function isChunked(encoding: string | string[] | undefined): boolean {
  if (encoding === undefined) return false;
  const codings = (Array.isArray(encoding) ? encoding.join(',') : encoding).split(',');
  return codings[codings.length - 1]!.trim().toLowerCase() === 'chunked';
}

/**
 * Kong's request-size-limiting: a Content-Length past the limit is refused at once; a body without one (chunked) is
 * counted as it streams to the upstream and refused when it passes the limit, without buffering it.
 * `require_content_length` refuses (411) requests that carry neither a Content-Length nor a chunked body.
 */
export function requestSizeLimitingAccess(ctx: PluginContext, config: RequestSizeLimitingConfig): PluginResponse | void {
  const limit = config.allowed_payload_size * SIZE_UNITS[config.size_unit];
  const declared = ctx.req.headers['content-length'];
  if (typeof declared === 'string' && /^\d+$/.test(declared.trim())) {
    if (Number(declared) > limit) return tooLarge(ctx);
    return;
  }
  const encoding = ctx.req.headers['transfer-encoding'];
  if (config.require_content_length && !isChunked(encoding)) return LENGTH_REQUIRED;
  if (encoding === undefined) return;
  const refusal = tooLarge(ctx);
  ctx.upstream.pipeBody?.((body: Readable) => body.pipe(new SizeLimit(limit, refusal)));
}
