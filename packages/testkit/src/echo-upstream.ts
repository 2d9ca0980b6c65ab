import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';

/** What the echo upstream answers: the request exactly as it arrived. */
export interface EchoedRequest {
  method: string;
  /** path without the query string, as received */
  path: string;
  /** the raw request target (path and query) */
  url: string;
  /** query arguments; repeated ones as arrays */
  query: Record<string, string | string[]>;
  headers: IncomingHttpHeaders;
  /** the body as UTF-8 text ('' when none) */
  body: string;
  /**
   * header names and values as they arrived, `[name, value, …]` (names keep their case); in `received` only, not in
   * the JSON answer
   */
  rawHeaders?: string[];
}

export interface EchoUpstream {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** every request received so far, oldest first */
  readonly received: EchoedRequest[];
  close(): Promise<void>;
}

function queryOf(search: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(search)) {
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

function describe(method: string, url: string, headers: IncomingHttpHeaders, body: string): EchoedRequest {
  const q = url.indexOf('?');
  return { method, path: q < 0 ? url : url.slice(0, q), url, query: queryOf(q < 0 ? '' : url.slice(q + 1)), headers, body };
}

/**
 * A real HTTP upstream for tests: answers every request with 200 and the JSON of what it received
 * ({method, path, url, query, headers, body}). Request headers steer it:
 * - `x-echo-status: <code>` answers with that status;
 * - `x-echo-delay-ms: <ms>` waits that long before answering (timeouts).
 * WebSocket upgrades are accepted: the first message is the JSON of the upgrade request, then every message is
 * echoed back.
 */
export async function startEchoUpstream(options: { host?: string; port?: number } = {}): Promise<EchoUpstream> {
  const received: EchoedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const echoed = describe(req.method ?? 'GET', req.url ?? '/', req.headers, Buffer.concat(chunks).toString('utf8'));
      received.push({ ...echoed, rawHeaders: req.rawHeaders });
      const status = Number(req.headers['x-echo-status'] ?? 200);
      const delay = Number(req.headers['x-echo-delay-ms'] ?? 0);
      const answer = () => {
        const body = Buffer.from(JSON.stringify(echoed));
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(body.length), 'x-echo-upstream': 'true' });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      if (delay > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, delay);
        timers.add(timer);
      } else {
        answer();
      }
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      const echoed = describe(req.method ?? 'GET', req.url ?? '/', req.headers, '');
      received.push(echoed);
      ws.send(JSON.stringify(echoed));
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    });
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const client of wss.clients) client.terminate();
        wss.close();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
