import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Http2SecureServer } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connectionTimeouts, type ConnectionTimeouts } from '../connection-timeouts';
import { answerClientError } from '../proxy/client-errors';
import { LingeringClose } from '../proxy/lingering-close';
import { acceptH2c, type H2cAcceptor } from '../grpc/h2c';
import { createTlsListener } from '../tls/https-listener';
import { frontLaneWanted, installFrontLane } from '../front-lane/install';
import type { DataPlaneServerOptions, ServerStats } from './options';
import type { ProxyPipeline } from './proxy-pipeline';

// The proxy's listeners, set up to hand their requests and upgrades to the pipeline: the plain one (HTTP, or HTTPS
// with `tls`; h2c beside HTTP/1.1 with `h2c`) and the TLS one (`tlsListen`), with the connection deadlines, the
// lingering close, the connection counts and the answers to malformed requests.

export interface PlainListener {
  readonly server: Server;
  readonly h2c: H2cAcceptor | null;
  readonly lingering: LingeringClose;
  readonly timeouts: ConnectionTimeouts;
}

/** Counts a connection as accepted, handled and active until it closes. */
function countConnection(stats: ServerStats, socket: Socket): void {
  stats.connections_accepted++;
  stats.connections_handled++;
  stats.connections_active++;
  socket.once('close', () => stats.connections_active--);
}

/** The plain listener (not listening yet). */
export function createPlainListener(options: DataPlaneServerOptions, pipeline: ProxyPipeline): PlainListener {
  const scheme = options.tls ? 'https' : 'http';
  // connections answered before their request's body was in end with a lingering close
  const lingering = new LingeringClose();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    lingering.track(req);
    pipeline.serve(req, res, scheme);
  };
  const timeouts = connectionTimeouts(options);
  const serverOptions = { connectionsCheckingInterval: timeouts.checkEvery };
  const server = options.tls ? createHttpsServer({ ...options.tls, ...serverOptions }, onRequest) : createServer(serverOptions, onRequest);
  // before the other `connection` listeners: it takes the HTTP/2 connections away from them
  const h2c = options.h2c && !options.tls ? acceptH2c(server, (req, res) => pipeline.serve(req, res, scheme)) : null;
  server.keepAliveTimeout = timeouts.keepAlive;
  server.headersTimeout = timeouts.clientHeader;
  server.requestTimeout = timeouts.request;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => pipeline.upgrade(req, socket, head, scheme));
  // the socket Node's HTTP layer writes to: the TLS one when this listener serves HTTPS
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => lingering.adopt(socket));
  server.on('connection', (socket: Socket) => countConnection(pipeline.stats, socket));
  // 431 for headers past Node's size limit, 408 for a client too slow to send them, 400 for anything else
  server.on('clientError', answerClientError);
  if (!options.tls && h2c === null && frontLaneWanted(options.frontLane, pipeline.forwarder.name)) installFrontLane(server, onRequest, timeouts);
  return { server, h2c, lingering, timeouts };
}

/** The TLS listener (`tlsListen`), listening: HTTP/1.1 and HTTP/2, the certificate chosen by SNI from the served config. */
export function openTlsListener(options: DataPlaneServerOptions, pipeline: ProxyPipeline, plain: PlainListener): Promise<{ server: Http2SecureServer; port: number }> {
  if (!options.defaultCertificate) throw new Error('a TLS listener needs a default certificate');
  return createTlsListener({
    listen: options.tlsListen!,
    defaultCertificate: options.defaultCertificate,
    sniLookup: (servername) => {
      const context = pipeline.holder.current.tls.sni.lookup(servername);
      if (context === null && servername) options.onDefaultCertificate?.(servername);
      return context;
    },
    onRequest: (req, res) => pipeline.serve(req, res, 'https'),
    onUpgrade: (req, socket, head) => pipeline.upgrade(req, socket, head, 'https'),
    timeouts: plain.timeouts,
    lingering: plain.lingering,
    onConnection: (socket) => countConnection(pipeline.stats, socket),
  });
}
