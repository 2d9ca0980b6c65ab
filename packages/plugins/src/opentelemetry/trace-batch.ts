import { bytesFieldLength, writeBytesField, writeVarint } from './fields';
import { fieldTag, KONG_SCOPE, otlp } from './proto';

// the keys the generated classes write, read from their own encodings (see `fieldTag`)
const T = {
  resourceSpans: fieldTag(otlp.ExportTraceServiceRequest, { resourceSpans: [{}] }),
  resource: fieldTag(otlp.ResourceSpans, { resource: {} }),
  scopeSpans: fieldTag(otlp.ResourceSpans, { scopeSpans: [{}] }),
  scope: fieldTag(otlp.ScopeSpans, { scope: {} }),
};
/** batch bodies get memory of at least this size, kept (up to SPARE_BUFFERS of them) once given back */
const SPARE_MIN_BYTES = 16 * 1024;
const SPARE_BUFFERS = 4;

/**
 * Frames batches of encoded spans (`SpanEncoder`'s, otlp.ts) as OTLP/HTTP protobuf `ExportTraceServiceRequest`s for one
 * exporter: its resource and Kong's scope, encoded once, then the queued entries (each a request's spans) as they are.
 */
export class TraceEncoder {
  /** the `resource` field of `ResourceSpans` and the `scope` field of `ScopeSpans` */
  private readonly resource: Buffer;
  private readonly scope: Buffer;
  /** the memory of batches given back (`release`), for the next ones: a batch of a few hundred spans is tens of KiB */
  private readonly spare: ArrayBuffer[] = [];

  constructor(resource: Uint8Array) {
    this.resource = Buffer.allocUnsafe(bytesFieldLength(T.resource, resource.length));
    writeBytesField(this.resource, 0, T.resource, resource);
    this.scope = Buffer.allocUnsafe(bytesFieldLength(T.scope, KONG_SCOPE.length));
    writeBytesField(this.scope, 0, T.scope, KONG_SCOPE);
  }

  /** a batch's request body; its memory may be given back with `release` once the body is sent (or given up) */
  encode(chunks: readonly Uint8Array[]): Buffer {
    let spans = 0;
    for (let i = 0; i < chunks.length; i++) spans += chunks[i]!.length;
    const scopeSpans = this.scope.length + spans;
    const resourceSpans = this.resource.length + bytesFieldLength(T.scopeSpans, scopeSpans);
    const out = this.buffer(bytesFieldLength(T.resourceSpans, resourceSpans));
    let at = writeVarint(out, writeVarint(out, 0, T.resourceSpans), resourceSpans);
    at += this.resource.copy(out, at);
    at = writeVarint(out, writeVarint(out, at, T.scopeSpans), scopeSpans);
    at += this.scope.copy(out, at);
    for (let i = 0; i < chunks.length; i++) {
      out.set(chunks[i]!, at);
      at += chunks[i]!.length;
    }
    return out;
  }

  /** gives back the memory of a body `encode` made, to be reused for a later batch */
  release(body: Buffer): void {
    if (body.byteOffset === 0 && body.buffer.byteLength >= SPARE_MIN_BYTES && this.spare.length < SPARE_BUFFERS) this.spare.push(body.buffer as ArrayBuffer);
  }

  /** `size` bytes: given-back memory when there is enough, else new memory of its own */
  private buffer(size: number): Buffer {
    const spare = this.spare.pop();
    if (spare !== undefined && spare.byteLength >= size) return Buffer.from(spare, 0, size);
    return Buffer.from(new ArrayBuffer(Math.max(size, SPARE_MIN_BYTES, spare?.byteLength ?? 0)), 0, size);
  }
}
