import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { acceptProxyProtocol } from './proxy-protocol/accept';

/**
 * `backlog` (the listen queue), `reusePort` (Node 22.12 and later; older versions ignore it) and `proxyProtocol`
 * (every connection opens with a PROXY protocol header) come from Kong's listener flags
 */
export type ListenAddress = string | number | { host?: string; port: number; backlog?: number; reusePort?: boolean; proxyProtocol?: boolean };

/** Whether the listener takes the PROXY protocol. */
export const takesProxyProtocol = (listen: ListenAddress): boolean => typeof listen === 'object' && listen.proxyProtocol === true;

/** `0.0.0.0:8000`, `[::]:8000`, `8000` or `{host, port}` → host and port. */
export function parseListen(listen: ListenAddress): { host: string | undefined; port: number } {
  if (typeof listen === 'number') return { host: undefined, port: listen };
  if (typeof listen === 'object') return { host: listen.host, port: listen.port };
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(listen.trim());
  if (m) return { host: m[1] ?? m[2], port: Number(m[3]) };
  if (/^\d+$/.test(listen.trim())) return { host: undefined, port: Number(listen) };
  throw new Error(`invalid listen address '${listen}' (expected host:port)`);
}

export function listenOn(server: Server, listen: ListenAddress): Promise<AddressInfo> {
  const { host, port } = parseListen(listen);
  if (takesProxyProtocol(listen)) acceptProxyProtocol(server);
  const tuning = typeof listen === 'object' ? { ...(listen.backlog !== undefined ? { backlog: listen.backlog } : {}), ...(listen.reusePort ? { reusePort: true } : {}) } : {};
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen({ port, host, ...tuning }, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Stops accepting connections; requests in flight get `graceMs` to finish before their connections are cut. */
export function closeServer(server: Server, graceMs = 0): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
  });
}
