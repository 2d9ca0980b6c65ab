/**
 * gRPC's length-prefixed messages (Kong's `kong.tools.grpc` frame/unframe): one byte of flags (0x00 a message,
 * 0x80 gRPC-Web's trailers), four bytes of length, big-endian, then the payload.
 */

export const MESSAGE_FRAME = 0x00;
export const TRAILER_FRAME = 0x80;

export function frame(type: number, payload: Buffer): Buffer {
  const head = Buffer.allocUnsafe(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** The payloads of the whole frames in `data`, and what is left of an incomplete last one. */
export function unframe(data: Buffer): { messages: Buffer[]; rest: Buffer } {
  const messages: Buffer[] = [];
  let at = 0;
  while (data.length - at >= 5) {
    const size = data.readUInt32BE(at + 1);
    if (data.length - at - 5 < size) break;
    messages.push(data.subarray(at + 5, at + 5 + size));
    at += 5 + size;
  }
  return { messages, rest: data.subarray(at) };
}

/** Collects frames across chunks: each `push` gives the messages completed so far. */
export class Unframer {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    const { messages, rest } = unframe(this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]));
    // a copy, so the chunk the rest came from is not kept whole
    this.pending = rest.length === 0 ? Buffer.alloc(0) : Buffer.from(rest);
    return messages;
  }

  /** bytes of an incomplete frame still waiting */
  get leftover(): Buffer {
    return this.pending;
  }
}

/** gRPC-Web's trailer frame: `grpc-status` and `grpc-message` as Kong writes them. */
export function trailerFrame(status: string, message: string): Buffer {
  return frame(TRAILER_FRAME, Buffer.from(`grpc-status:${status}\r\ngrpc-message:${message}\r\n`, 'latin1'));
}
