import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';

/** The client connection preface every HTTP/2 connection opens with (RFC 9113 §3.4). */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** nginx's default for http2_max_concurrent_streams, as on the TLS listener */
const MAX_CONCURRENT_STREAMS = 128;

/**
 * HTTP/2 in clear text (h2c, "prior knowledge") beside HTTP/1.1 on the plain listener, as Kong's `http2` listen flag
 * gives it: a connection opening with the HTTP/2 preface goes to an HTTP/2 server, any other to the HTTP/1.1 server.
 * Must be called before other `connection` listeners are added to `server`.
 */
export interface H2cAcceptor {
  readonly server: Http2Server;
  /** closes its sessions: streams in flight get `graceMs` to finish */
  close(graceMs: number): void;
}

export function acceptH2c(server: Server, onRequest: (req: IncomingMessage, res: ServerResponse) => void): H2cAcceptor {
  const h2 = createHttp2Server({ settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } }, (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const headers = req.headers as Record<string, string | string[] | undefined>;
    const authority = headers[':authority'];
    if (headers.host === undefined && typeof authority === 'string') headers.host = authority;
    // the compatibility API gives HTTP/2 streams the request/response surface the handler uses
    Reflect.apply(onRequest, undefined, [req, res]);
  });
  const sessions = new Set<ServerHttp2Session>();
  h2.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  const http1 = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const onData = (chunk: Buffer) => {
      socket.off('data', onData);
      socket.pause();
      socket.unshift(chunk);
      const head = chunk.subarray(0, PREFACE.length);
      if (head.length > 0 && PREFACE.subarray(0, head.length).equals(head)) {
        // the HTTP/2 session reads what was put back, then takes the socket over
        h2.emit('connection', socket);
      } else {
        for (const listener of http1) listener.call(server, socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
  });
  return {
    server: h2,
    close(graceMs) {
      for (const session of sessions) session.close();
      const timer = setTimeout(() => {
        for (const session of sessions) session.destroy();
      }, graceMs);
      timer.unref();
    },
  };
}
