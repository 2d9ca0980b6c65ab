import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { dnsStatistics } from './balancer/dns-stats';
import type { ConfigHolder } from './config-holder';
import { closeServer, listenOn, type ListenAddress } from './listen';
import type { DataPlaneServer, ServerStats } from './server';

/** What `/metrics` serves: a prom-client registry, or the node's metrics gathered across its proxy workers. */
export type MetricsSource = Pick<Registry, 'metrics' | 'contentType'>;

export interface StatusServerOptions {
  holder: ConfigHolder;
  listen: ListenAddress;
  /** the proxy whose counters `server` reports */
  proxy?: DataPlaneServer;
  /**
   * the node's counters when they are not one proxy's: `server` summed over its proxy workers, and more fields (each
   * worker's own counts); wins over `proxy`
   */
  counters?: () => Promise<{ server: ServerStats } & Record<string, unknown>>;
  /** more fields for `GET /status` (sync state, node id…) */
  details?: () => Record<string, unknown>;
  /** the node's metrics registry, served at `GET /metrics` (404 there when absent) */
  metrics?: MetricsSource;
  /**
   * whether the proxy accepts connections (every listener; with workers, at least one worker); default: `proxy`'s
   * plain and TLS servers listen. `/status/ready` is 503 while it says no.
   */
  proxyListening?: () => boolean;
}

export interface StatusServer {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function send(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': String(bytes.length) });
  res.end(bytes);
}

/**
 * The data plane's status listener (Kong keeps it apart from the proxy): `GET /status` reports the configuration being
 * served, `GET /status/ready` is 503 until a configuration is loaded and while the proxy does not accept connections,
 * `GET /metrics` is the node's metrics (Prometheus text).
 */
export async function createStatusServer(options: StatusServerOptions): Promise<StatusServer> {
  const { holder, proxy } = options;
  const proxyListening = options.proxyListening ?? (() => !proxy || (proxy.server.listening && (proxy.tlsServer?.listening ?? true)));
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { message: 'Method not allowed' });
    if (path === '/status') {
      const current = holder.current;
      const body = (counters: Record<string, unknown>) => ({
        configuration_hash: current.hash,
        config_version: current.loaded ? current.version : null,
        ...counters,
        ...options.details?.(),
      });
      const stream = options.proxy?.streamStats() ?? null;
      if (!options.counters) return send(res, 200, body({ server: options.proxy?.stats() ?? {}, ...(stream !== null ? { stream } : {}) }));
      options.counters().then(
        (counters) => send(res, 200, body(counters)),
        (err: unknown) => send(res, 500, { message: `status unavailable: ${err instanceof Error ? err.message : String(err)}` }),
      );
      return;
    }
    // Kong's new DNS client's statistics (this process's lookups: the node's balancers)
    if (path === '/status/dns') return send(res, 200, { worker: { id: 0, count: 1 }, stats: dnsStatistics() });
    if (path === '/metrics' && options.metrics) {
      const registry = options.metrics;
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType, 'content-length': String(Buffer.byteLength(text)) });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        (err: unknown) => send(res, 500, { message: `metrics unavailable: ${err instanceof Error ? err.message : String(err)}` }),
      );
      return;
    }
    if (path === '/status/ready') {
      if (!holder.loaded) return send(res, 503, { message: 'no configuration available (empty configuration present)' });
      return proxyListening() ? send(res, 200, { message: 'ready' }) : send(res, 503, { message: 'the proxy is not accepting connections' });
    }
    send(res, 404, { message: 'Not found' });
  });
  const address = await listenOn(server, options.listen);
  return { server, port: address.port, close: () => closeServer(server) };
}
