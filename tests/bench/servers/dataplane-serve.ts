// Shared by the data-plane scenario scripts: one Gatehouse data plane over a snapshot built here, no control plane.
// FORWARDER=undici (default) or http-proxy selects the forwarding engine.
import type { Plugin, SnapshotConfig } from '@gatehouse/core';
import { compile, ConfigHolder, createDataPlaneServer, type ForwarderKind } from '@gatehouse/data-plane';
import { bundledPlugins, openPlugins, type PluginRuntime } from '@gatehouse/plugins';
import { makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

export interface BenchGateway {
  /** plugins for the benchmark service (built with makePlugin; `service` is filled in) */
  plugins: (serviceId: string) => Plugin[];
  consumers?: SnapshotConfig['consumers'];
  credentials?: SnapshotConfig['credentials'];
  runtime?: PluginRuntime;
  /** runs after the server closed (SIGTERM/SIGINT) */
  cleanup?: () => Promise<void>;
  /** balancing: the service's host (an upstream's name) and the upstreams and targets of the snapshot */
  serviceHost?: string;
  upstreams?: SnapshotConfig['upstreams'];
  targets?: SnapshotConfig['targets'];
}

/** Starts the data plane on PORT (0 = any) in front of UPSTREAM_URL on path `/`; prints `LISTENING <port>`. */
export async function serveGateway(setup: BenchGateway): Promise<void> {
  const upstream = process.env.UPSTREAM_URL;
  if (!upstream) throw new Error('UPSTREAM_URL is required');
  const service = makeService({ name: 'bench', url: upstream, ...(setup.serviceHost ? { host: setup.serviceHost } : {}) });
  const route = makeRoute({ paths: ['/'], service: { id: service.id } });
  const snapshot = makeSnapshot({
    services: [service],
    routes: [route],
    consumers: setup.consumers ?? [],
    plugins: setup.plugins(service.id),
    credentials: setup.credentials ?? {},
    upstreams: setup.upstreams ?? [],
    targets: setup.targets ?? [],
  });
  const quiet = { error: () => undefined, warn: () => undefined };
  const runtime: PluginRuntime = { log: quiet, ...setup.runtime };
  const plugins = await openPlugins(runtime, bundledPlugins);
  const server = await createDataPlaneServer({
    holder: new ConfigHolder(compile(snapshot)),
    listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0) },
    forwarder: (process.env.FORWARDER as ForwarderKind | undefined) ?? 'undici',
    runtime,
    log: quiet,
  });
  const stop = async () => {
    await server.close();
    await plugins.close();
    await setup.cleanup?.();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(`LISTENING ${server.port}\n`);
}
