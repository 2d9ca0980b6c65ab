import { connect } from 'node:net';

/** A response read off a raw socket. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** body bytes the client had written when the response arrived (or the socket closed) */
  bodyBytesSent: number;
}

export interface RawRequestOptions {
  /** the request head without its final empty line, e.g. `POST /x HTTP/1.1\r\nhost: h\r\ncontent-length: 5` */
  head: string;
  /** body bytes to send after the head, streamed in 64 KiB chunks with backpressure; 0 = none */
  bodyBytes?: number;
  /** send the body with chunked transfer encoding (the head must say so) */
  chunked?: boolean;
  /** send the head without the empty line that ends it, then wait (a client too slow to send its headers) */
  unfinishedHead?: boolean;
  /**
   * write the whole body before reading anything (a client that does not watch for an early answer): an answer sent
   * early must still be there once the body is out
   */
  wholeBodyFirst?: boolean;
  timeoutMs?: number;
}

function parse(raw: Buffer, bodyBytesSent: number): RawResponse | null {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = raw.subarray(end + 4);
  const length = headers['content-length'];
  if (length !== undefined && body.length < Number(length)) return null;
  return { status, headers, body: body.toString('utf8'), bodyBytesSent };
}

/**
 * Sends one HTTP/1.1 request over a raw TCP socket, byte for byte as given (paths no client library would leave
 * alone, oversized or unfinished heads, huge bodies), and resolves with the first response. Writing the body stops as
 * soon as a complete response has arrived, so a gateway that answers early (413) is not sent the rest (unless
 * `wholeBodyFirst`).
 */
export function rawRequest(port: number, options: RawRequestOptions): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = 0;
    let done = false;
    const timer = setTimeout(() => finish(new Error(`no response within ${options.timeoutMs ?? 30_000} ms`)), options.timeoutMs ?? 30_000);
    const finish = (result: RawResponse | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      // socket errors come from another realm under test runners: tell a response by its shape
      if ('bodyBytesSent' in result) resolve(result);
      else reject(result);
    };
    const total = options.bodyBytes ?? 0;
    const block = Buffer.alloc(64 * 1024, 0x61);
    const pump = () => {
      while (!done && sent < total) {
        const size = Math.min(block.length, total - sent);
        const piece = size === block.length ? block : block.subarray(0, size);
        sent += size;
        const ok = options.chunked ? socket.write(`${size.toString(16)}\r\n`) && socket.write(piece) && socket.write('\r\n') : socket.write(piece);
        if (!ok) return void socket.once('drain', pump);
      }
      if (!done && options.chunked && sent >= total) socket.write('0\r\n\r\n');
      if (!done && sent >= total && options.wholeBodyFirst) socket.resume();
    };
    socket.on('connect', () => {
      if (options.wholeBodyFirst) socket.pause();
      socket.write(options.unfinishedHead ? `${options.head}\r\n` : `${options.head}\r\n\r\n`);
      if (!options.unfinishedHead) pump();
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const parsed = parse(Buffer.concat(chunks), sent);
      if (parsed) finish(parsed);
    });
    const closed = () => {
      const parsed = parse(Buffer.concat(chunks), sent);
      finish(parsed ?? new Error(`connection closed without a complete response after ${sent} body bytes`));
    };
    socket.on('end', closed);
    socket.on('close', closed);
    socket.on('error', (err) => {
      // a reset after the response arrived still counts as the response
      const parsed = parse(Buffer.concat(chunks), sent);
      finish(parsed ?? err);
    });
  });
}
