import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * One target of a balanced upstream, for tests: answers every request with `{"target": <name>, …}` so a test sees
 * which target served it. Its answers can be changed while it runs: `status` for proxied requests, `healthStatus`
 * for the health path, `delayMs` to make it slow.
 */
export interface TargetServer {
  readonly name: string;
  readonly port: number;
  /** `127.0.0.1:<port>` */
  readonly address: string;
  /** proxied requests served (health checks not counted) */
  hits: number;
  /** health-path requests served */
  healthChecks: number;
  status: number;
  healthStatus: number;
  delayMs: number;
  /** the headers of the last proxied request */
  lastHeaders: IncomingHttpHeaders | null;
  close(): Promise<void>;
}

export interface TargetServerOptions {
  healthPath?: string;
  status?: number;
  healthStatus?: number;
  delayMs?: number;
  host?: string;
}

export async function startTargetServer(name: string, options: TargetServerOptions = {}): Promise<TargetServer> {
  const healthPath = options.healthPath ?? '/health';
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const target: TargetServer = {
    name,
    port: 0,
    address: '',
    hits: 0,
    healthChecks: 0,
    status: options.status ?? 200,
    healthStatus: options.healthStatus ?? 200,
    delayMs: options.delayMs ?? 0,
    lastHeaders: null,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const health = (req.url ?? '/').split('?')[0] === healthPath;
      if (health) target.healthChecks++;
      else {
        target.hits++;
        target.lastHeaders = req.headers;
      }
      const status = health ? target.healthStatus : target.status;
      const body = JSON.stringify({ target: name, path: req.url, host: req.headers.host ?? null });
      const reply = () => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
        res.end(body);
      };
      if (target.delayMs > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          reply();
        }, target.delayMs);
        timers.add(timer);
      } else reply();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  Object.assign(target, { port, address: `127.0.0.1:${port}` });
  return target;
}
