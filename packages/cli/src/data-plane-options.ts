import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { PROXY_WORKER_ENV, setUpstreamCaBundle, type DataPlaneSettings, type DataPlaneStartOptions, type ProxyListen, type RuntimeLogLevel } from '@gatehouse/data-plane';
import { currentLogLevel, followRuntimeLogLevel, isKongLogLevel, setRuntimeLogLevel, type Logger } from './logger';
import type { Listen, Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

/** The process's log level as the data plane reads and follows it (see logger.ts). */
const processLogLevel: RuntimeLogLevel = {
  current: currentLogLevel,
  follow: followRuntimeLogLevel,
  set: (level, timeoutSeconds) => {
    if (isKongLogLevel(level)) setRuntimeLogLevel(level, timeoutSeconds);
  },
};

/** A listener with the Kong flags Node can honour: `backlog=N`, `reuseport` (Node 22.12 and later) and `proxy_protocol`. */
export function listenAddress(listen: Listen): ProxyListen {
  const { host, port, flags } = listen;
  return { host, port, ...(flags?.backlog != null ? { backlog: flags.backlog } : {}), ...(flags?.reuseport ? { reusePort: true } : {}), ...(flags?.proxyProtocol ? { proxyProtocol: true } : {}) };
}

/** What a data plane process (a node, or one of its proxy workers) takes from the settings. */
export function dataPlaneSettings(settings: Settings, id: string, log: Logger): DataPlaneSettings {
  return {
    id,
    version: GATEHOUSE_VERSION,
    proxy: {
      listen: listenAddress(settings.proxyListen),
      h2c: settings.proxyHttp2,
      streamListen: settings.streamListen.map(({ host, port, ssl, udp, proxyProtocol }) => ({ host, port, ssl, udp, proxyProtocol })),
      tlsListen: settings.proxyTlsListen && listenAddress(settings.proxyTlsListen),
      tlsCertificate: settings.proxyTlsCert && settings.proxyTlsKey ? { cert: settings.proxyTlsCert, key: settings.proxyTlsKey } : null,
      trustedIps: settings.trustedIps,
      realIp: settings.realIpHeader ? { header: settings.realIpHeader, recursive: settings.realIpRecursive } : null,
      underscoreHeaders: settings.underscoreHeaders,
      frontLane: settings.frontLane,
      maxBufferedBody: settings.maxBufferedBody,
      headersTimeout: settings.clientHeaderTimeout,
      keepAliveTimeout: settings.keepaliveTimeout,
      headers: settings.headers,
      headersUpstream: settings.headersUpstream,
      errorDefaultType: settings.errorDefaultType,
      tracing: settings.tracing,
    },
    redisUrl: settings.redisUrl,
    redisPrefix: settings.redisPrefix,
    syslogAddress: settings.syslogAddress,
    dataDir: settings.dataDir,
    accessLog: settings.accessLog,
    dnsResolver: settings.dnsResolver,
    dnsOrder: settings.dnsOrder,
    log,
    logLevel: processLogLevel,
  };
}

/** What a data plane node takes: its settings, what it shares with the process, and what its proxy workers inherit. */
export function dataPlaneOptions(
  settings: Settings,
  shared: Pick<DataPlaneStartOptions, 'id' | 'log' | 'bus' | 'secret' | 'health' | 'metrics' | 'extraRuntime'>,
): DataPlaneStartOptions {
  const { id } = shared;
  return {
    ...dataPlaneSettings(settings, id, shared.log),
    ...shared,
    workers: settings.workers,
    // a worker reads the primary's settings (its role's defaults) and reports the node's id
    workerEnv: { [PROXY_WORKER_ENV]: settings.role, GATEHOUSE_DATA_PLANE_ID: id },
    statusListen: settings.statusListen && { host: settings.statusListen.host, port: settings.statusListen.port },
    labels: settings.dataPlaneLabels,
  };
}

/**
 * Kong's lua_ssl_trusted_certificate (GATEHOUSE_UPSTREAM_CA_BUNDLE): read once per process, before any config compiles
 * or plugin connects. As in Kong, `system` beside files trusts the system's store too.
 */
export function adoptUpstreamCaBundle(settings: Settings): void {
  const files = settings.upstreamCaBundle.filter((entry) => entry !== 'system');
  const pems = files.map((path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      throw new Error(`GATEHOUSE_UPSTREAM_CA_BUNDLE: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  if (pems.length > 0 && files.length < settings.upstreamCaBundle.length) pems.unshift(...rootCertificates);
  setUpstreamCaBundle(pems);
}
