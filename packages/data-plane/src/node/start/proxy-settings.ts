import { AccessLog } from '../../observe/access-log';
import { parseGatewayHeaders, parseHeadersUpstream } from '../../observe/gateway-headers';
import { parseErrorDefaultType } from '../../proxy/error-bodies';
import type { DataPlaneServerOptions } from '../../server';
import { readPemPair, selfSignedDefault, type PemPair } from '../../tls';
import type { DataPlaneLog, DataPlaneSettings } from './options';

/** The proxy's default TLS certificate: the configured pair, else the data directory's self-signed one (undefined: no TLS listener). */
export async function defaultProxyCertificate(settings: Pick<DataPlaneSettings, 'proxy' | 'dataDir'>): Promise<PemPair | undefined> {
  const { proxy } = settings;
  if (!proxy.tlsListen && !proxy.streamListen.some((listen) => listen.ssl)) return undefined;
  return proxy.tlsCertificate ? readPemPair(proxy.tlsCertificate.cert, proxy.tlsCertificate.key) : selfSignedDefault(settings.dataDir);
}

/** What the proxy server takes from the settings: the same for a data plane in one process and for a proxy worker. */
export async function proxyServerSettings(
  settings: DataPlaneSettings,
): Promise<
  Pick<DataPlaneServerOptions, 'listen' | 'h2c' | 'streamListen' | 'tlsListen' | 'defaultCertificate' | 'trustedIps' | 'realIp' | 'underscoreHeaders' | 'frontLane' | 'maxBufferedBody' | 'headersTimeout' | 'keepAliveTimeout' | 'log' | 'headers' | 'tracing' | 'errorDefaultType'>
> {
  const { proxy, log } = settings;
  return {
    listen: proxy.listen,
    h2c: proxy.h2c,
    streamListen: proxy.streamListen,
    tlsListen: proxy.tlsListen,
    defaultCertificate: await defaultProxyCertificate(settings),
    trustedIps: proxy.trustedIps,
    realIp: proxy.realIp,
    underscoreHeaders: proxy.underscoreHeaders,
    frontLane: proxy.frontLane,
    maxBufferedBody: proxy.maxBufferedBody,
    headersTimeout: proxy.headersTimeout,
    keepAliveTimeout: proxy.keepAliveTimeout,
    log: { error: log.error, warn: log.warn },
    headers: { ...parseGatewayHeaders(proxy.headers, `gatehouse/${settings.version}`), upstreamRequestId: parseHeadersUpstream(proxy.headersUpstream) },
    errorDefaultType: parseErrorDefaultType(proxy.errorDefaultType ?? undefined),
    tracing: proxy.tracing,
  };
}

/** The access log at `destination` (null when off); a destination that cannot be written is logged. */
export function openAccessLog(destination: string | null, log: Pick<DataPlaneLog, 'error'>): AccessLog | null {
  return destination ? new AccessLog(destination, (err) => log.error('access log: cannot write', { destination, error: err.message })) : null;
}
