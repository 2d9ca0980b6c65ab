import { connect, type TLSSocket } from 'node:tls';

/** HTTP/2 frame types and flags the raw client uses (RFC 9113 §6). */
export const H2 = {
  DATA: 0,
  HEADERS: 1,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  CONTINUATION: 9,
  END_STREAM: 0x1,
  END_HEADERS: 0x4,
} as const;

export interface RawFrame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** One frame, header and payload. */
export function h2Frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/**
 * An HPACK header block for a request (RFC 7541, no Huffman, no indexing): `:method`, `:scheme`, `:path`,
 * `:authority` and any other headers, values byte for byte (control characters, spaces, `\`: what no client library
 * would send). Values up to 127 bytes.
 */
export function h2RequestBlock(path: string, options: { method?: string; authority?: string; headers?: Record<string, string> } = {}): Buffer {
  const literal = (nameIndex: number, value: string) => {
    const bytes = Buffer.from(value, 'latin1');
    if (bytes.length > 127) throw new Error('h2RequestBlock: values up to 127 bytes');
    return Buffer.concat([Buffer.from([nameIndex, bytes.length]), bytes]);
  };
  const named = (name: string, value: string) => {
    const n = Buffer.from(name, 'latin1');
    return Buffer.concat([Buffer.from([0, n.length]), n, literal(0, value).subarray(1)]);
  };
  const method = options.method ?? 'GET';
  const parts = [
    method === 'GET' ? Buffer.from([0x82]) : method === 'POST' ? Buffer.from([0x83]) : literal(0x02, method),
    Buffer.from([0x87]), // :scheme https
    literal(0x04, path),
    literal(0x01, options.authority ?? 'gw.test'),
  ];
  for (const [name, value] of Object.entries(options.headers ?? {})) parts.push(named(name.toLowerCase(), value));
  return Buffer.concat(parts);
}

/** A TLS connection speaking raw HTTP/2 frames: what it sends is exactly what the test wrote. */
export interface RawHttp2Connection {
  socket: TLSSocket;
  /** every frame received so far */
  frames: RawFrame[];
  send(bytes: Buffer): void;
  /** resolves with the first frame received (now or later) that `match` accepts */
  frame(match: (f: RawFrame) => boolean, timeoutMs?: number): Promise<RawFrame>;
  /** resolves once the server closed the connection */
  closed: Promise<void>;
  destroy(): void;
}

/**
 * Opens a TLS connection with ALPN `h2` and sends the connection preface and an empty SETTINGS frame (plus the ACK of
 * the server's), unless `preface` is false.
 */
export function rawHttp2(port: number, options: { preface?: boolean } = {}): Promise<RawHttp2Connection> {
  return new Promise((resolve, reject) => {
    const frames: RawFrame[] = [];
    const waiting = new Set<{ match: (f: RawFrame) => boolean; done: (f: RawFrame) => void }>();
    let pending = Buffer.alloc(0);
    let markClosed!: () => void;
    const closed = new Promise<void>((r) => (markClosed = r));
    const socket = connect({ host: '127.0.0.1', port, servername: 'gw.test', rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
      if (socket.alpnProtocol !== 'h2') return reject(new Error(`ALPN chose ${String(socket.alpnProtocol)}, not h2`));
      if (options.preface !== false) socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), h2Frame(H2.SETTINGS, 0, 0)]));
      resolve(connection);
    });
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        const frame = { type: pending[3]!, flags: pending[4]!, stream: pending.readUInt32BE(5) & 0x7fffffff, payload: Buffer.from(pending.subarray(9, 9 + length)) };
        pending = pending.subarray(9 + length);
        frames.push(frame);
        if (frame.type === H2.SETTINGS && (frame.flags & 1) === 0 && !socket.destroyed) socket.write(h2Frame(H2.SETTINGS, 1, 0));
        for (const w of waiting) if (w.match(frame)) w.done(frame);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => markClosed());
    const connection: RawHttp2Connection = {
      socket,
      frames,
      send: (bytes) => void socket.write(bytes),
      frame(match, timeoutMs = 30_000) {
        const seen = frames.find(match);
        if (seen) return Promise.resolve(seen);
        return new Promise((done, fail) => {
          const entry = {
            match,
            done: (f: RawFrame) => {
              clearTimeout(timer);
              waiting.delete(entry);
              done(f);
            },
          };
          const timer = setTimeout(() => {
            waiting.delete(entry);
            fail(new Error(`no matching frame within ${timeoutMs} ms`));
          }, timeoutMs);
          waiting.add(entry);
        });
      },
      closed,
      destroy: () => socket.destroy(),
    };
  });
}
