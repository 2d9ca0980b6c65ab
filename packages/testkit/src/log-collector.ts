import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface CollectedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** the parsed JSON body */
  body: unknown;
}

export interface LogCollector {
  /** `http://127.0.0.1:<port>/logs` */
  readonly url: string;
  readonly port: number;
  /** every request received while up, oldest first */
  readonly received: CollectedRequest[];
  /** stops listening (connections are cut); the port stays reserved for `start` */
  stop(): Promise<void>;
  /** listens again on the same port */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real HTTP receiver for logging plugins (http-log): answers 200 and keeps each request's JSON body. It can be
 * stopped and started again on the same port, to show what a plugin does while its receiver is down.
 */
export async function startLogCollector(port = 0): Promise<LogCollector> {
  const received: CollectedRequest[] = [];
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  let boundPort = port;

  const listen = async () => {
    const s = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {}
        received.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
        res.end('{}');
      });
    });
    s.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(boundPort, '127.0.0.1', () => resolve());
    });
    boundPort = (s.address() as AddressInfo).port;
    server = s;
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = null;
      if (!s) return resolve();
      for (const socket of sockets) socket.destroy();
      s.close(() => resolve());
    });

  await listen();
  return {
    get url() {
      return `http://127.0.0.1:${boundPort}/logs`;
    },
    get port() {
      return boundPort;
    },
    received,
    stop,
    start: listen,
    close: stop,
  };
}
