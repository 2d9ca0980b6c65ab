import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContext, TLSSocket } from 'node:tls';
import { parseListen, type ListenAddress } from '../listen';
import type { PemPair } from './default-certificate';

export interface TlsListenerOptions {
  listen: ListenAddress;
  defaultCertificate: PemPair;
  /** the certificate for a handshake's SNI name, read from the config being served; null = the default one */
  sniLookup(servername: string): SecureContext | null;
  onRequest(req: IncomingMessage, res: ServerResponse): void;
  onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  onConnection(socket: TLSSocket): void;
}

/**
 * `:authority` is what HTTP/1.1 calls Host. The other pseudo-headers stay (the compatibility API reads the method
 * and path from them); the upstream request never carries them.
 */
function adaptHttp2(req: Http2ServerRequest): void {
  const headers = req.headers as Record<string, string | string[] | undefined>;
  const authority = headers[':authority'];
  if (headers.host === undefined && typeof authority === 'string') headers.host = authority;
}

const sessions = new WeakMap<Http2SecureServer, Set<ServerHttp2Session>>();
const sockets = new WeakMap<Http2SecureServer, Set<TLSSocket>>();

/**
 * The proxy's TLS listener: TLS 1.2 and 1.3 only, HTTP/2 or HTTP/1.1 as the client's ALPN asks. Each handshake's
 * certificate is looked up by SNI in the config current at that moment, so a new certificate is served as soon as
 * its snapshot is swapped in, while connections already open keep theirs.
 */
export async function createTlsListener(options: TlsListenerOptions): Promise<{ server: Http2SecureServer; port: number }> {
  const server = createSecureServer(
    {
      allowHTTP1: true,
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
      if (req.httpVersionMajor === 2) adaptHttp2(req as Http2ServerRequest);
      // the compatibility API gives HTTP/2 streams the request/response surface the handler uses
      options.onRequest(req as IncomingMessage, res as ServerResponse);
    },
  );
  const open = new Set<TLSSocket>();
  const live = new Set<ServerHttp2Session>();
  sockets.set(server, open);
  sessions.set(server, live);
  server.on('secureConnection', (socket: TLSSocket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    options.onConnection(socket);
  });
  server.on('session', (session: ServerHttp2Session) => {
    live.add(session);
    session.once('close', () => live.delete(session));
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => options.onUpgrade(req, socket, head));
  // a failed handshake (wrong protocol version, garbage) only concerns that client
  server.on('tlsClientError', () => {});
  server.setTimeout(60_000);

  const { host, port } = parseListen(options.listen);
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
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    // HTTP/2 sessions finish their streams and close; HTTP/1.1 keep-alive connections are cut when the grace ends
    for (const session of sessions.get(server) ?? []) session.close();
  });
}
