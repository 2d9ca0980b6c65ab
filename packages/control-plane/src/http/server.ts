import { listenOn } from './listening';
import { createServer, type Server } from 'node:http';
import type { ServerCounters } from '../routes/root';
import { createServer as createTlsServer } from 'node:https';

export interface AdminServer {
  server: Server;
  /** the bound address, e.g. 127.0.0.1 */
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Parses `host:port` (`[::1]:8001` for IPv6; a bare port listens on 127.0.0.1). */
export function parseListen(listen: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(listen.trim());
  if (match) return { host: match[1] ?? (match[2] || '0.0.0.0'), port: Number(match[3]) };
  if (/^\d+$/.test(listen.trim())) return { host: '127.0.0.1', port: Number(listen) };
  throw new Error(`invalid listen address '${listen}' (expected host:port)`);
}

/**
 * Starts the admin API on `listen` (port 0 picks a free port) and keeps the connection counters of GET /status; over
 * TLS with `tls` (Kong's `admin_listen … ssl`).
 */
export async function startAdminServer(app: { locals: { counters: ServerCounters } } & Parameters<typeof createServer>[1], listen: string, tls?: { cert: string; key: string }): Promise<AdminServer> {
  const { host, port } = parseListen(listen);
  const counters = app.locals.counters;
  const server: Server = tls ? createTlsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, app) : createServer(app);
  server.on('connection', (socket) => {
    counters.connections_accepted++;
    counters.connections_handled++;
    counters.connections_active++;
    socket.once('close', () => counters.connections_active--);
  });
  return listenOn(server, host, port);
}
