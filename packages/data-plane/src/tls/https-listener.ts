import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContext, TLSSocket } from 'node:tls';
import { parseListen, takesProxyProtocol, type ListenAddress } from '../listen';
import { acceptProxyProtocol } from '../proxy-protocol/accept';
import { answerClientError } from '../proxy/client-errors';
import type { LingeringClose } from '../proxy/lingering-close';
import type { PemPair } from './default-certificate';
import { Http2Guard } from './http2-guard';
import type { ConnectionTimeouts } from '../connection-timeouts';

export interface TlsListenerOptions {
  listen: ListenAddress;
  defaultCertificate: PemPair;
  /** the certificate for a handshake's SNI name, read from the config being served; null = the default one */
  sniLookup(servername: string): SecureContext | null;
  onRequest(req: IncomingMessage, res: ServerResponse): void;
  onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  onConnection(socket: TLSSocket): void;
  /** header, keep-alive and request deadlines (decision 31), for HTTP/1.1 and HTTP/2 alike */
  timeouts: ConnectionTimeouts;
  /** lingering close of HTTP/1.1 connections answered before their body was in */
  lingering: LingeringClose;
}

/** nginx's default for http2_max_concurrent_streams (decision 31) */
export const MAX_CONCURRENT_STREAMS = 128;

/**
 * `:authority` is what HTTP/1.1 calls Host. The other pseudo-headers stay (the compatibility API reads the method
 * and path from them); the upstream request never carries them.
 */
function adaptHttp2(req: Http2ServerRequest): void {
  const headers = req.headers as Record<string, string | string[] | undefined>;
  const authority = headers[':authority'];
  if (headers.host === undefined && typeof authority === 'string') headers.host = authority;
}

/** what Node's HTTP/1.1 layer reads from a server allowing HTTP/1.1 (absent from Http2SecureServer's type) */
interface Http1Deadlines {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
}

const sessions = new WeakMap<Http2SecureServer, Set<ServerHttp2Session>>();
const sockets = new WeakMap<Http2SecureServer, Set<TLSSocket>>();
const guards = new WeakMap<Http2SecureServer, Http2Guard>();

/**
 * The proxy's TLS listener: TLS 1.2 and 1.3 only, HTTP/2 or HTTP/1.1 as the client's ALPN asks. Each handshake's
 * certificate is looked up by SNI in the config current at that moment, so a new certificate is served as soon as
 * its snapshot is swapped in, while connections already open keep theirs.
 */
export async function createTlsListener(options: TlsListenerOptions): Promise<{ server: Http2SecureServer; port: number }> {
  const { timeouts, lingering } = options;
  const server = createSecureServer(
    {
      allowHTTP1: true,
      settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS },
      // a client that does not finish its handshake in time is as slow as one that does not send its headers
      handshakeTimeout: timeouts.clientHeader,
      // as node:http does on the plain listener: a response goes out when written, not after the peer's ACK
      noDelay: true,
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.3',
      cert: options.defaultCertificate.cert,
      key: options.defaultCertificate.key,
      SNICallback: (servername, done) => {
        let context: SecureContext | null = null;
        try {
          context = options.sniLookup(servername);
        } catch {
          context = null;
        }
        // a falsy context makes Node serve the listener's default certificate
        done(null, context ?? undefined);
      },
    },
    (req: Http2ServerRequest | IncomingMessage, res: Http2ServerResponse | ServerResponse) => {
      // HTTP/2 requests are handled on the next turn of the event loop, once the rest of the read they came in has
      // been taken: a stream reset right behind its HEADERS (rapid reset) is closed by then, and is never routed
      if (req.httpVersionMajor === 2) return void setImmediate(handleHttp2, req as Http2ServerRequest, res as Http2ServerResponse);
      lingering.track(req as IncomingMessage);
      options.onRequest(req as IncomingMessage, res as ServerResponse);
    },
  );
  function handleHttp2(req: Http2ServerRequest, res: Http2ServerResponse): void {
    if (req.stream.closed) return;
    adaptHttp2(req);
    // the compatibility API gives HTTP/2 streams the request/response surface the handler uses
    options.onRequest(req as unknown as IncomingMessage, res as unknown as ServerResponse);
  }
  const open = new Set<TLSSocket>();
  const live = new Set<ServerHttp2Session>();
  const guard = new Http2Guard({ clientHeaderTimeout: timeouts.clientHeader, keepAliveTimeout: timeouts.keepAlive, resetAllowance: MAX_CONCURRENT_STREAMS });
  sockets.set(server, open);
  sessions.set(server, live);
  guards.set(server, guard);
  server.on('secureConnection', (socket: TLSSocket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (socket.alpnProtocol !== 'h2') lingering.adopt(socket);
    options.onConnection(socket);
  });
  server.on('session', (session: ServerHttp2Session) => {
    live.add(session);
    session.once('close', () => live.delete(session));
    guard.adopt(session);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => options.onUpgrade(req, socket, head));
  // a failed handshake (wrong protocol version, garbage) only concerns that client
  server.on('tlsClientError', () => {});
  // HTTP/1.1 over TLS: 431, 408 (slow headers), 400, as on the plain listener
  server.on('clientError', answerClientError);
  // HTTP/1.1 over TLS: the same deadlines as the plain listener (Node reads them from the server)
  Object.assign(server as Http2SecureServer & Http1Deadlines, {
    headersTimeout: timeouts.clientHeader,
    requestTimeout: timeouts.request,
    keepAliveTimeout: timeouts.keepAlive,
    connectionsCheckingInterval: timeouts.checkEvery,
  } satisfies Http1Deadlines);
  // a connection silent that long is closed whatever it is doing; never before the keep-alive deadline
  server.setTimeout(Math.max(60_000, timeouts.keepAlive + 1_000));

  const { host, port } = parseListen(options.listen);
  if (takesProxyProtocol(options.listen)) acceptProxyProtocol(server);
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
  return { server, port: address.port };
}

/** Stops accepting; HTTP/2 sessions are told to finish, and whatever is still open after `graceMs` is cut. */
export function closeTlsListener(server: Http2SecureServer, graceMs = 0): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const timer = setTimeout(() => {
      for (const socket of sockets.get(server) ?? []) socket.destroy();
    }, graceMs);
    timer.unref();
    guards.get(server)?.close();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    // HTTP/2 sessions finish their streams and close; HTTP/1.1 keep-alive connections are cut when the grace ends
    for (const session of sessions.get(server) ?? []) session.close();
  });
}
