import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { MemorySocket } from './memory-socket';
import type { ProxyPipeline } from './proxy-pipeline';

/** A request to run through the pipeline without a client socket. */
export interface MemoryRequest {
  /** GET when absent */
  method?: string;
  /** the request target: `/path?query` */
  url: string;
  /** header values; arrays send the header once per value (Host: `localhost` unless given) */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** the scheme the request came in on (a route's `protocols`); http when absent */
  scheme?: 'http' | 'https';
  /** the client's address (the socket's peer); 127.0.0.1 when absent */
  clientAddress?: string;
  /** the port the request came in on; 80, or 443 for https, when absent */
  localPort?: number;
  /** the TLS server name the client sent (https) */
  serverName?: string;
}

export interface MemoryResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** one HTTP server per pipeline, never listening: memory connections are handed to it */
const servers = new WeakMap<ProxyPipeline, Server>();
const schemes = new WeakMap<object, string>();

function memoryServer(p: ProxyPipeline): Server {
  let server = servers.get(p);
  if (server === undefined) {
    server = createServer((req, res) => p.serve(req, res, schemes.get(req.socket) ?? 'http'));
    servers.set(p, server);
  }
  return server;
}

/**
 * Runs one request through `p.serve`, the walk every listener's requests take: the request is written by Node's HTTP
 * client into a connection held in memory, parsed by Node's HTTP server, served, and the response parsed back by the
 * client. Only the client's socket is missing; upstreams are reached as for any request.
 */
export function handleInMemory(p: ProxyPipeline, request: MemoryRequest): Promise<MemoryResponse> {
  const scheme = request.scheme ?? 'http';
  const [serverEnd, clientEnd] = MemorySocket.pair(request.clientAddress ?? '127.0.0.1', request.localPort ?? (scheme === 'https' ? 443 : 80));
  if (request.serverName !== undefined) serverEnd.servername = request.serverName;
  schemes.set(serverEnd, scheme);
  memoryServer(p).emit('connection', serverEnd);
  return new Promise<MemoryResponse>((resolve, reject) => {
    const headers = { connection: 'close', ...request.headers };
    const req = httpRequest({ method: request.method ?? 'GET', path: request.url, headers, createConnection: () => clientEnd }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(request.body);
  }).finally(() => {
    clientEnd.destroy();
    serverEnd.destroy();
  });
}
