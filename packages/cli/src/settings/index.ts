import { resolve } from 'node:path';
import { parseByteSize, parseUntrustedLua, type TracingSettings, type UntrustedLuaOptions } from '@gatehouse/plugins';
import { parseAdminGuiOrigins, parseAdminHosts } from '@gatehouse/control-plane';
import { keyPrefixFor } from '@gatehouse/sync';
import { parseDnsOrder, type DnsRecordType } from '@gatehouse/data-plane';
import type { RouterFlavor } from '@gatehouse/core';
import {
  oneOf,
  parseDataPlaneLabels,
  parseDuration,
  parseListen,
  parseRealIpHeader,
  parseWorkers,
  proxyListenOf,
  readTracing,
  routerFlavorOf,
  streamListenOf,
  type Listen,
  type StreamListen,
} from './values';

export { SETTINGS_DOC } from './doc';
export {
  parseDataPlaneLabels,
  parseDuration,
  parseListen,
  parseRealIpHeader,
  parseWorkers,
  readTracing,
  routerFlavorOf,
  type Listen,
  type StreamListen,
} from './values';

export type Role = 'all' | 'control_plane' | 'data_plane';
export type RbacMode = 'off' | 'on' | 'entity' | 'both';
export type DatabaseMode = 'postgres' | 'embedded' | 'off';

/** Everything the `gatehouse` command reads from the environment, with defaults that make `gatehouse start` work alone. */
export interface Settings {
  role: Role;
  adminListen: Listen;
  proxyListen: Listen;
  /** the plain proxy listener also takes HTTP/2 in clear text (the `http2` flag of GATEHOUSE_PROXY_LISTEN) */
  proxyHttp2: boolean;
  /** Kong's stream_listen (GATEHOUSE_STREAM_LISTEN): TCP, TLS (`ssl`) and UDP (`udp`) listeners of the stream routes */
  streamListen: StreamListen[];
  statusListen: Listen | null;
  /** the proxy's TLS listener; null when `off` */
  proxyTlsListen: Listen | null;
  /** default certificate and key files for the TLS listener; null = a self-signed one in the data directory */
  proxyTlsCert: string | null;
  proxyTlsKey: string | null;
  /** certificate and key files of the admin API over TLS (`GATEHOUSE_ADMIN_LISTEN … ssl`); null = the self-signed one */
  adminTlsCert: string | null;
  adminTlsKey: string | null;
  databaseUrl: string | null;
  /** where the configuration lives: Postgres (DATABASE_URL), embedded Postgres (PGlite), or `off` (in memory, from a declarative file or `POST /config`) */
  database: DatabaseMode;
  /** the declarative configuration file loaded at start when the database is `off` (YAML or JSON, Kong's format) */
  declarativeConfig: string | null;
  dataDir: string;
  redisUrl: string | null;
  redisPrefix: string;
  /** where the syslog plugin sends: a unix datagram socket path or `udp://host:port` */
  syslogAddress: string;
  clusterSecret: string | null;
  enforceRbac: RbacMode;
  adminToken: string | null;
  keyringSecret: string | null;
  dataPlaneId: string | null;
  /** CIDRs or addresses of proxies in front of the data plane whose X-Forwarded-For is believed */
  trustedIps: string[];
  /** the header naming the client behind trusted proxies (Kong's real_ip_header); null: X-Forwarded-For, then X-Real-IP */
  realIpHeader: string | null;
  /** walk the header past trusted proxies (Kong's real_ip_recursive) */
  realIpRecursive: boolean;
  /**
   * PEM files of CAs trusted for the TLS connections the node opens: upstreams without ca_certificates, and plugins'
   * receivers (Kong's lua_ssl_trusted_certificate); `system` among them adds the system's store; empty: the system's
   */
  upstreamCaBundle: string[];
  /** DNS servers (`ip[:port]`) that resolve upstream targets given by name; empty = the system's resolver */
  dnsResolver: string[];
  /** Kong's dns_order: the record types asked, in order */
  dnsOrder: DnsRecordType[];
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Kong's untrusted_lua (off | sandbox | on) and the sandbox's extra requires and globals */
  untrustedLua: UntrustedLuaOptions;
  /** keep client headers whose names contain `_` (dropped by default) */
  underscoreHeaders: boolean;
  /** the plain proxy listener's front lane for simple HTTP/1.x requests (node:http serves the rest) */
  frontLane: boolean;
  /** the most the data plane buffers of a request body, in bytes */
  maxBufferedBody: number;
  /** the largest `POST /config` body the admin API reads, in bytes */
  adminMaxConfigBody: number;
  /** ms a proxy client has to send its request headers (Kong's client_header_timeout) */
  clientHeaderTimeout: number;
  /** ms an idle keep-alive proxy connection is kept (Kong's keepalive_timeout) */
  keepaliveTimeout: number;
  /** origins whose browser pages may call the admin API (decision 14) */
  adminGuiOrigins: string[];
  /** `Host` names the admin API answers besides loopback ones when it listens on loopback (decision 27) */
  adminHosts: string[];
  /** Kong's `headers` setting: which headers the gateway adds to responses */
  headers: string;
  /** Kong's `headers_upstream`: `X-Kong-Request-Id` or `off` */
  headersUpstream: string;
  /** Kong's `error_default_type`: the body type of the gateway's errors for requests without `Accept`; null = JSON */
  errorDefaultType: string | null;
  /** Kong's `cluster_dp_labels` of this data plane (`name:value`, comma-separated) */
  dataPlaneLabels: Record<string, string>;
  /** the proxy's access log: `stdout`, a file path, or null (off) */
  accessLog: string | null;
  /** Kong's `router_flavor`: `expressions` lets routes carry `expression` and `priority` */
  routerFlavor: RouterFlavor;
  /** proxy worker processes per data plane (1 = the proxy runs in the node's one process) */
  workers: number;
  /** Kong's tracing_instrumentations and tracing_sampling_rate */
  tracing: TracingSettings;
}

/** The settings of a node in `role`, read from the environment. */
export function readSettings(env: NodeJS.ProcessEnv, role: Role): Settings {
  const blank = (v: string | undefined) => (v === undefined || v === '' ? null : v);
  const status = env.GATEHOUSE_STATUS_LISTEN ?? (role === 'data_plane' ? '0.0.0.0:8100' : 'off');
  const tlsListen = env.GATEHOUSE_PROXY_TLS_LISTEN ?? (role === 'data_plane' ? '0.0.0.0:8443' : '127.0.0.1:8443');
  const tlsCert = blank(env.GATEHOUSE_PROXY_TLS_CERT);
  const tlsKey = blank(env.GATEHOUSE_PROXY_TLS_KEY);
  if ((tlsCert === null) !== (tlsKey === null)) throw new Error('GATEHOUSE_PROXY_TLS_CERT and GATEHOUSE_PROXY_TLS_KEY go together');
  return {
    role,
    adminListen: parseListen(env.GATEHOUSE_ADMIN_LISTEN ?? '127.0.0.1:8001', 'GATEHOUSE_ADMIN_LISTEN'),
    ...proxyListenOf(env.GATEHOUSE_PROXY_LISTEN ?? '0.0.0.0:8000'),
    streamListen: streamListenOf(env.GATEHOUSE_STREAM_LISTEN),
    statusListen: status === 'off' ? null : parseListen(status, 'GATEHOUSE_STATUS_LISTEN'),
    proxyTlsListen: tlsListen === 'off' ? null : parseListen(tlsListen, 'GATEHOUSE_PROXY_TLS_LISTEN'),
    proxyTlsCert: tlsCert,
    proxyTlsKey: tlsKey,
    adminTlsCert: blank(env.GATEHOUSE_ADMIN_TLS_CERT),
    adminTlsKey: blank(env.GATEHOUSE_ADMIN_TLS_KEY),
    databaseUrl: blank(env.DATABASE_URL),
    ...databaseSettings(env, blank(env.DATABASE_URL), role),
    dataDir: resolve(env.GATEHOUSE_DATA_DIR ?? './.gatehouse'),
    redisUrl: blank(env.REDIS_URL),
    // a Redis Cluster keeps every key of the deployment in one hash slot: the prefix is a hash tag there
    redisPrefix: keyPrefixFor(blank(env.REDIS_URL), env.GATEHOUSE_REDIS_PREFIX ?? 'gatehouse:'),
    syslogAddress: blank(env.GATEHOUSE_SYSLOG_ADDRESS) ?? '/dev/log',
    clusterSecret: blank(env.GATEHOUSE_CLUSTER_SECRET),
    enforceRbac: oneOf(env.GATEHOUSE_ENFORCE_RBAC, ['off', 'on', 'entity', 'both'] as const, 'off', 'GATEHOUSE_ENFORCE_RBAC'),
    adminToken: blank(env.GATEHOUSE_ADMIN_TOKEN),
    keyringSecret: blank(env.GATEHOUSE_KEYRING_SECRET),
    dataPlaneId: blank(env.GATEHOUSE_DATA_PLANE_ID),
    trustedIps: (env.GATEHOUSE_TRUSTED_IPS ?? '').split(',').map((v) => v.trim()).filter(Boolean),
    realIpHeader: parseRealIpHeader(env.GATEHOUSE_REAL_IP_HEADER, role === 'control_plane' ? null : [parseListen(env.GATEHOUSE_PROXY_LISTEN ?? '0.0.0.0:8000', 'GATEHOUSE_PROXY_LISTEN'), tlsListen === 'off' ? null : parseListen(tlsListen, 'GATEHOUSE_PROXY_TLS_LISTEN')]),
    realIpRecursive: oneOf(env.GATEHOUSE_REAL_IP_RECURSIVE, ['on', 'off'] as const, 'off', 'GATEHOUSE_REAL_IP_RECURSIVE') === 'on',
    upstreamCaBundle: upstreamCaBundleOf(env.GATEHOUSE_UPSTREAM_CA_BUNDLE),
    dnsResolver: (env.GATEHOUSE_DNS_RESOLVER ?? '').split(',').map((v) => v.trim()).filter(Boolean),
    dnsOrder: parseDnsOrder(env.GATEHOUSE_DNS_ORDER),
    logLevel: oneOf(env.GATEHOUSE_LOG_LEVEL, ['debug', 'info', 'warn', 'error'] as const, 'info', 'GATEHOUSE_LOG_LEVEL'),
    untrustedLua: parseUntrustedLua(env.GATEHOUSE_UNTRUSTED_LUA, env.GATEHOUSE_UNTRUSTED_LUA_SANDBOX_REQUIRES, env.GATEHOUSE_UNTRUSTED_LUA_SANDBOX_ENVIRONMENT),
    underscoreHeaders: oneOf(env.GATEHOUSE_UNDERSCORE_HEADERS, ['on', 'off'] as const, 'off', 'GATEHOUSE_UNDERSCORE_HEADERS') === 'on',
    frontLane: oneOf(env.GATEHOUSE_FRONT_LANE, ['on', 'off'] as const, 'on', 'GATEHOUSE_FRONT_LANE') === 'on',
    maxBufferedBody: parseByteSize(env.GATEHOUSE_MAX_BUFFERED_BODY || '8m', 'GATEHOUSE_MAX_BUFFERED_BODY'),
    adminMaxConfigBody: parseByteSize(env.GATEHOUSE_ADMIN_MAX_CONFIG_BODY || '64m', 'GATEHOUSE_ADMIN_MAX_CONFIG_BODY'),
    clientHeaderTimeout: parseDuration(env.GATEHOUSE_CLIENT_HEADER_TIMEOUT || '60s', 'GATEHOUSE_CLIENT_HEADER_TIMEOUT'),
    keepaliveTimeout: parseDuration(env.GATEHOUSE_KEEPALIVE_TIMEOUT || '60s', 'GATEHOUSE_KEEPALIVE_TIMEOUT'),
    adminGuiOrigins: parseAdminGuiOrigins(env.GATEHOUSE_ADMIN_GUI_ORIGINS),
    adminHosts: parseAdminHosts(env.GATEHOUSE_ADMIN_HOSTS),
    headers: env.GATEHOUSE_HEADERS ?? 'server_tokens, latency_tokens, X-Kong-Request-Id',
    headersUpstream: env.GATEHOUSE_HEADERS_UPSTREAM ?? 'X-Kong-Request-Id',
    errorDefaultType: env.GATEHOUSE_ERROR_DEFAULT_TYPE || null,
    dataPlaneLabels: parseDataPlaneLabels(env.GATEHOUSE_CLUSTER_DP_LABELS),
    accessLog: env.GATEHOUSE_ACCESS_LOG === 'off' ? null : env.GATEHOUSE_ACCESS_LOG || 'stdout',
    routerFlavor: routerFlavorOf(env),
    workers: parseWorkers(env.GATEHOUSE_WORKERS),
    tracing: readTracing(env),
  };
}

/** GATEHOUSE_UPSTREAM_CA_BUNDLE's entries; `system` alone is the default (an empty list) */
function upstreamCaBundleOf(value: string | undefined): string[] {
  const entries = (value ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '');
  return entries.every((v) => v === 'system') ? [] : entries;
}

/** GATEHOUSE_DATABASE and GATEHOUSE_DECLARATIVE_CONFIG, checked against each other and DATABASE_URL */
function databaseSettings(env: NodeJS.ProcessEnv, databaseUrl: string | null, role: Role): Pick<Settings, 'database' | 'declarativeConfig'> {
  const database = oneOf(env.GATEHOUSE_DATABASE, ['postgres', 'embedded', 'off'] as const, databaseUrl ? 'postgres' : 'embedded', 'GATEHOUSE_DATABASE');
  const file = env.GATEHOUSE_DECLARATIVE_CONFIG ? resolve(env.GATEHOUSE_DECLARATIVE_CONFIG) : null;
  if (database === 'postgres' && !databaseUrl && role !== 'data_plane') throw new Error('GATEHOUSE_DATABASE=postgres needs DATABASE_URL');
  if (file && database !== 'off') throw new Error('GATEHOUSE_DECLARATIVE_CONFIG is read only with GATEHOUSE_DATABASE=off');
  // RBAC's users and roles live in the database: without one, enforcement cannot be honoured, so it is refused
  const rbac = env.GATEHOUSE_ENFORCE_RBAC ?? 'off';
  if (database === 'off' && role !== 'data_plane' && rbac !== 'off' && rbac !== '') throw new Error('GATEHOUSE_ENFORCE_RBAC needs a database: it cannot be used with GATEHOUSE_DATABASE=off');
  return { database, declarativeConfig: file };
}
