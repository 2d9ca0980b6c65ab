import { closeServer, listenOn } from './listen';
import { createPlainListener, openTlsListener } from './proxy-server/listeners';
import type { DataPlaneServer, DataPlaneServerOptions } from './proxy-server/options';
import { ProxyPipeline } from './proxy-server/proxy-pipeline';
import { StreamProxy } from './stream/stream-proxy';
import { closeTlsListener } from './tls/https-listener';

export type { DataPlaneLogger, DataPlaneServer, DataPlaneServerOptions, ServerStats } from './proxy-server/options';

/**
 * The proxy server: its listeners (plain, TLS, stream) around one ProxyPipeline, which routes each request, runs the
 * plugin chain and forwards (proxy-server/). Each request reads the holder's config once and uses that object to its end.
 */
export async function createDataPlaneServer(options: DataPlaneServerOptions): Promise<DataPlaneServer> {
  const pipeline = new ProxyPipeline(options);
  const { holder, balancers, forwarder, log, runtime } = pipeline;
  const plain = createPlainListener(options, pipeline);
  const server = plain.server;
  const address = await listenOn(server, options.listen);
  let tlsServer = null;
  if (options.tlsListen != null) {
    const listener = await openTlsListener(options, pipeline, plain).catch(async (err: unknown) => {
      await closeServer(server, 0);
      throw err;
    });
    tlsServer = listener.server;
    pipeline.tlsPort = listener.port;
  }
  const streams =
    options.streamListen && options.streamListen.length > 0
      ? await StreamProxy.start({ holder, balancers, listens: options.streamListen, defaultCertificate: options.defaultCertificate, log, trustedIps: options.trustedIps ?? [], runtime })
      : null;
  if (streams !== null) options.metrics?.observeStream(() => streams.counters.stats);
  return {
    server,
    holder,
    forwarder,
    balancers,
    host: address.address,
    port: address.port,
    tlsServer,
    tlsPort: pipeline.tlsPort,
    streamPorts: streams?.ports ?? [],
    stats: () => ({ ...pipeline.stats }),
    streamStats: () => (streams === null ? null : { ...streams.counters.stats }),
    async close(graceMs = 0) {
      pipeline.stopFollowingConfig();
      plain.h2c?.close(graceMs);
      await streams?.close();
      await Promise.all([closeServer(server, graceMs), tlsServer ? closeTlsListener(tlsServer, graceMs) : null]);
      await pipeline.closeUpstreams();
    },
  };
}
