import { Transform } from 'node:stream';
import type protobuf from 'protobufjs';
import type { ResponseTrailers } from '../contract';
import { frame, MESSAGE_FRAME, trailerFrame, unframe, Unframer } from '../shared/grpc/frames';
import { decodeToJson, encodeJson } from '../shared/grpc/json-message';
import { protoFile } from '../shared/grpc/proto-file';

/**
 * gRPC-Web ⇄ gRPC for one call (Kong's grpc-web `deco`), chosen by the client's Content-Type: base64 text or
 * binary, messages in protobuf or JSON (JSON needs the `.proto` file), framed as gRPC, or bare for `application/json`.
 */

interface Encoding {
  text: 'plain' | 'base64' | null;
  framing: 'grpc' | 'none' | null;
  message: 'proto' | 'json' | null;
}

const ENCODINGS: Record<string, Encoding> = {
  'application/grpc-web': { text: 'plain', framing: 'grpc', message: 'proto' },
  'application/grpc-web-text': { text: 'base64', framing: 'grpc', message: 'proto' },
  'application/grpc-web+proto': { text: 'plain', framing: 'grpc', message: 'proto' },
  'application/grpc-web-text+proto': { text: 'base64', framing: 'grpc', message: 'proto' },
  'application/grpc-web+json': { text: 'plain', framing: 'grpc', message: 'json' },
  'application/grpc-web-text+json': { text: 'base64', framing: 'grpc', message: 'json' },
  'application/json': { text: 'plain', framing: 'none', message: 'json' },
};

/** The client's request could not be turned into a gRPC call (answered 400 with the message). */
export class DecodeRefusal extends Error {}

export class GrpcWebCodec {
  private constructor(
    readonly mimetype: string,
    private readonly encoding: Encoding,
    private readonly input: protobuf.Type | null,
    private readonly output: protobuf.Type | null,
  ) {}

  /** The codec for a call, or Kong's message when it cannot be made. */
  static create(mimetype: string, path: string, proto: string | null): GrpcWebCodec | string {
    const encoding = ENCODINGS[mimetype] ?? { text: null, framing: null, message: null };
    if (encoding.message === 'proto') return new GrpcWebCodec(mimetype, encoding, null, null);
    if (proto === null) return 'transcoding requests require a .proto file defining the service';
    const method = protoFile(proto).byPath.get(path);
    if (method === undefined) return `Unknown path ${JSON.stringify(path)}`;
    return new GrpcWebCodec(mimetype, encoding, method.input, method.output);
  }

  /** The client's body as a gRPC request body. */
  upstream(body: Buffer): Buffer {
    if (this.encoding.text === 'base64') body = Buffer.from(body.toString('latin1'), 'base64');
    if (this.encoding.message !== 'json') return body;
    const text = this.encoding.framing === 'grpc' ? (unframe(body).messages[0] ?? Buffer.alloc(0)) : body;
    let value: unknown;
    try {
      value = JSON.parse(text.toString('utf8'));
    } catch (err) {
      throw new DecodeRefusal(`decode json err: ${(err as Error).message}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DecodeRefusal('body must be a table');
    try {
      return frame(MESSAGE_FRAME, encodeJson(this.input!, value as Record<string, unknown>));
    } catch {
      throw new DecodeRefusal('failed to encode payload');
    }
  }

  private encodeOut(piece: Buffer): Buffer {
    return this.encoding.text === 'base64' ? Buffer.from(piece.toString('base64'), 'latin1') : piece;
  }

  /** One upstream message as the client gets it. */
  private message(payload: Buffer): Buffer {
    const body = this.encoding.message === 'proto' ? payload : Buffer.from(JSON.stringify(decodeToJson(this.output!, payload)), 'utf8');
    return this.encodeOut(this.encoding.framing === 'grpc' || this.encoding.message === 'proto' ? frame(MESSAGE_FRAME, body) : body);
  }

  /**
   * The upstream's messages rewritten one by one as they arrive; at the end, for framed content types, the trailers
   * as gRPC-Web's trailer frame (`grpc-status`, `grpc-message`).
   */
  downstream(trailers: ResponseTrailers): Transform {
    const frames = new Unframer();
    return new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        try {
          const out = frames.push(chunk).map((payload) => this.message(payload));
          done(null, out.length === 0 ? undefined : Buffer.concat(out));
        } catch (err) {
          done(err as Error);
        }
      },
      flush: (done) => {
        const pieces: Buffer[] = [];
        if (frames.leftover.length > 0 && this.encoding.message === 'proto') pieces.push(this.encodeOut(frames.leftover));
        if (this.encoding.framing === 'grpc') {
          const fields = trailers.take();
          pieces.push(this.encodeOut(trailerFrame(fields['grpc-status'] ?? '0', fields['grpc-message'] ?? '')));
        }
        done(null, pieces.length === 0 ? undefined : Buffer.concat(pieces));
      },
    });
  }
}
