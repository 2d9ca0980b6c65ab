import { listenOn } from './listening';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { PublisherStatus } from '../publisher/snapshot-publisher';
import { parseListen } from './server';

export interface ControlPlaneStatusOptions {
  /** `host:port` (GATEHOUSE_STATUS_LISTEN) */
  listen: string;
  pingDatabase: () => Promise<boolean>;
  /** the database's config version */
  configVersion: () => Promise<number>;
  publisher: () => PublisherStatus | null;
  /** the node's metrics, served at `/metrics` */
  metrics?: Registry;
  /** more fields for `/status` (the local data plane's state in `start`) */
  extras?: () => Record<string, unknown>;
}

export interface ControlPlaneStatusServer {
  server: Server;
  host: string;
  port: number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, head: boolean): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(bytes.length) });
  res.end(head ? undefined : bytes);
}

/** Ready = the database answers and the last publication succeeded; otherwise the reason. */
export async function readiness(options: Pick<ControlPlaneStatusOptions, 'pingDatabase' | 'publisher'>): Promise<{ ready: boolean; message: string }> {
  if (!(await options.pingDatabase().catch(() => false))) return { ready: false, message: 'database unreachable' };
  const publisher = options.publisher();
  if (publisher === null || publisher.version === null) return { ready: false, message: 'no configuration published yet' };
  if (publisher.last_error !== null) return { ready: false, message: `last publication failed: ${publisher.last_error}` };
  return { ready: true, message: 'ready' };
}

/**
 * The control plane's status listener (decision 20): `/status`, `/status/ready` and `/metrics` without RBAC, for
 * probes and scrapers on a private port. Read-only; anything but GET/HEAD is 405.
 */
export async function startControlPlaneStatusServer(options: ControlPlaneStatusOptions): Promise<ControlPlaneStatusServer> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) return send(res, 405, { message: 'Method not allowed' }, false);
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    if (path === '/status') {
      const reachable = await options.pingDatabase().catch(() => false);
      const version = reachable ? await options.configVersion().catch(() => null) : null;
      return send(res, 200, { database: { reachable }, config_version: version, publisher: options.publisher(), ...options.extras?.() }, head);
    }
    if (path === '/status/ready') {
      const { ready, message } = await readiness(options);
      return send(res, ready ? 200 : 503, { message }, head);
    }
    if (path === '/metrics' && options.metrics) {
      const text = await options.metrics.metrics();
      res.writeHead(200, { 'content-type': options.metrics.contentType, 'content-length': String(Buffer.byteLength(text)) });
      return res.end(head ? undefined : text);
    }
    send(res, 404, { message: 'Not found' }, head);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { message: `status unavailable: ${err instanceof Error ? err.message : String(err)}` }, false);
      else res.destroy();
    });
  });
  const { host, port } = parseListen(options.listen);
  return listenOn(server, host, port);
}
