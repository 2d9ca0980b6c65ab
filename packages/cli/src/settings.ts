import { resolve } from 'node:path';
import { parseByteSize, parseTracingInstrumentations, parseUntrustedLua, type TracingSettings, type UntrustedLuaOptions } from '@gatehouse/plugins';
import { parseAdminGuiOrigins, parseAdminHosts } from '@gatehouse/control-plane';
import { keyPrefixFor } from '@gatehouse/sync';
import { parseDnsOrder, type DnsRecordType } from '@gatehouse/data-plane';
import { ROUTER_FLAVORS, type RouterFlavor } from '@gatehouse/core';
import { usableCores } from './cpu-count';
import { parseListenEntry, parseListenList, type ListenFlags } from './listen-syntax';

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
  /** PEM files of CAs upstream certificates are verified against (Kong's lua_ssl_trusted_certificate); empty: the system's */
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

export interface Listen {
  host: string;
  port: number;
  /** Kong's listener flags written after the address (`reuseport`, `backlog=N`, …); absent when none */
  flags?: ListenFlags;
}

/** One row per variable: the README's configuration table is generated from the same facts. */
export const SETTINGS_DOC: Array<{ name: string; default: string; meaning: string }> = [
  { name: 'GATEHOUSE_ROLE', default: 'all', meaning: '`all` (control plane + data plane in one process), `control_plane` or `data_plane`; the subcommand sets it' },
  { name: 'GATEHOUSE_ADMIN_LISTEN', default: '127.0.0.1:8001', meaning: 'admin API address (control plane)' },
  { name: 'GATEHOUSE_PROXY_LISTEN', default: '0.0.0.0:8000', meaning: "proxy address (data plane), Kong's listen syntax; with `http2`, HTTP/2 in clear text (h2c, for gRPC) beside HTTP/1.1" },
  { name: 'GATEHOUSE_STREAM_LISTEN', default: 'off', meaning: "stream proxy listeners in Kong's `stream_listen` syntax (`addr:port [ssl] [udp]`, comma-separated) for `tcp`/`tls`/`udp`/`tls_passthrough` routes (data plane)" },
  { name: 'GATEHOUSE_STATUS_LISTEN', default: '0.0.0.0:8100 (data_plane), off (all, control_plane)', meaning: 'status API without RBAC: `/status`, `/status/ready`, `/metrics` (data plane, control plane, or both planes with `start`); `off` disables it' },
  { name: 'DATABASE_URL', default: 'unset → embedded Postgres (PGlite) in the data directory', meaning: 'Postgres connection string for the control plane' },
  { name: 'GATEHOUSE_DATABASE', default: '`postgres` when DATABASE_URL is set, else `embedded`', meaning: "Kong's `database`: `postgres`, `embedded` (PGlite in the data directory) or `off` (no database: the configuration is the declarative file, replaced whole by `POST /config`; admin writes answer 405)" },
  { name: 'GATEHOUSE_DECLARATIVE_CONFIG', default: 'unset', meaning: "Kong's `declarative_config`: a YAML or JSON file (format 3.0, 2.1 or 1.1) loaded at start with `GATEHOUSE_DATABASE=off`; a `data-plane` given one serves it alone, without a control plane or Redis" },
  { name: 'GATEHOUSE_DATA_DIR', default: './.gatehouse', meaning: 'embedded database, keyring file and the data plane\'s snapshot cache' },
  { name: 'REDIS_URL', default: 'unset → in-process bus', meaning: '`redis://[user:pass@]host:port[/db]` or `rediss://` (TLS); carries snapshots and data-plane heartbeats' },
  { name: 'GATEHOUSE_REDIS_PREFIX', default: 'gatehouse:', meaning: 'key and channel prefix in Redis' },
  { name: 'GATEHOUSE_SYSLOG_ADDRESS', default: '/dev/log', meaning: 'where the `syslog` plugin sends its RFC 5424 lines: a unix datagram socket path or `udp://host:port`' },
  { name: 'GATEHOUSE_CLUSTER_SECRET', default: 'generated per process in `all`; required otherwise', meaning: 'HMAC key signing snapshots, at least 32 bytes; the same value on the control plane and every data plane' },
  { name: 'GATEHOUSE_ENFORCE_RBAC', default: 'off', meaning: '`off`, `on` (endpoint permissions), `entity` (entity permissions) or `both`' },
  { name: 'GATEHOUSE_ADMIN_TOKEN', default: 'unset', meaning: 'creates (once) a super-admin RBAC user with this token, so enforcement can be switched on' },
  { name: 'GATEHOUSE_KEYRING_SECRET', default: 'unset → a generated key file in the data directory', meaning: 'encrypts private key material at rest' },
  { name: 'GATEHOUSE_DATA_PLANE_ID', default: 'random UUID per start', meaning: 'the id a data plane reports to `GET /clustering/data-planes`' },
  { name: 'GATEHOUSE_TRUSTED_IPS', default: 'unset (none)', meaning: 'comma-separated addresses or CIDRs of proxies in front of the data plane; only their X-Forwarded-For decides the client IP' },
  { name: 'GATEHOUSE_REAL_IP_HEADER', default: 'unset (X-Forwarded-For, then X-Real-IP)', meaning: "the header that names the client when the peer is a trusted proxy (Kong's real_ip_header), read as nginx does: its last address; `proxy_protocol` takes the client from the PROXY protocol header (needs a proxy listener with the `proxy_protocol` flag)" },
  { name: 'GATEHOUSE_REAL_IP_RECURSIVE', default: 'off', meaning: "`on` walks GATEHOUSE_REAL_IP_HEADER right to left past trusted proxies (Kong's real_ip_recursive)" },
  { name: 'GATEHOUSE_UPSTREAM_CA_BUNDLE', default: 'system', meaning: "comma-separated PEM files of CAs that upstream certificates are verified against when a service has tls_verify and no ca_certificates (Kong's lua_ssl_trusted_certificate; `system` = the system's store)" },
  { name: 'GATEHOUSE_HEADERS_UPSTREAM', default: 'X-Kong-Request-Id', meaning: "headers the gateway adds to upstream requests (Kong's `headers_upstream`): `X-Kong-Request-Id` or `off`" },
  { name: 'GATEHOUSE_ERROR_DEFAULT_TYPE', default: 'unset (application/json)', meaning: "body type of the gateway's own errors for requests without `Accept` (Kong's `error_default_type`): `application/json`, `text/html`, `application/xml` or `text/plain`" },
  { name: 'GATEHOUSE_CLUSTER_DP_LABELS', default: 'unset (none)', meaning: "a data plane's labels (Kong's `cluster_dp_labels`), `name:value` comma-separated, shown in `GET /clustering/data-planes`" },
  { name: 'GATEHOUSE_ADMIN_TLS_CERT', default: 'unset → the self-signed certificate of the data directory', meaning: "PEM files of the admin API's certificate and key (with GATEHOUSE_ADMIN_TLS_KEY) when GATEHOUSE_ADMIN_LISTEN has the `ssl` flag (Kong's admin_ssl_cert)" },
  { name: 'GATEHOUSE_CONF', default: 'unset', meaning: "a kong.conf file whose Kong settings apply (also `--conf`); `KONG_*` variables are read as well, and GATEHOUSE_* variables win over both" },
  { name: 'GATEHOUSE_DNS_RESOLVER', default: 'unset (the system resolver)', meaning: "comma-separated DNS servers (`ip[:port]`) for upstream targets given by name (Kong's dns_resolver)" },
  { name: 'GATEHOUSE_PROXY_TLS_LISTEN', default: '0.0.0.0:8443 (data_plane), 127.0.0.1:8443 (all)', meaning: 'proxy TLS address (TLS 1.2/1.3, HTTP/1.1 and HTTP/2); certificates by SNI from `certificates`/`snis`; `off` disables it' },
  { name: 'GATEHOUSE_PROXY_TLS_CERT', default: 'unset → a self-signed certificate made once in the data directory', meaning: 'PEM file of the default certificate served when no SNI matches (with GATEHOUSE_PROXY_TLS_KEY)' },
  { name: 'GATEHOUSE_PROXY_TLS_KEY', default: 'unset', meaning: 'PEM file of the default certificate\'s private key' },
  { name: 'GATEHOUSE_LOG_LEVEL', default: 'info', meaning: '`debug`, `info`, `warn` or `error`' },
  { name: 'GATEHOUSE_UNDERSCORE_HEADERS', default: 'off', meaning: '`on` keeps client headers whose names contain `_`; `off` drops them before routing' },
  { name: 'GATEHOUSE_MAX_BUFFERED_BODY', default: '8m', meaning: 'the most the data plane buffers of a request body (key_in_body, hmac-auth digests, oauth2 endpoints); bytes, or `k`/`m` suffix; past it 413' },
  { name: 'GATEHOUSE_ADMIN_MAX_CONFIG_BODY', default: '64m', meaning: 'the largest `POST /config` body the admin API reads (every other admin body: 4 MiB); bytes, or `k`/`m` suffix; past it 413' },
  { name: 'GATEHOUSE_CLIENT_HEADER_TIMEOUT', default: '60s', meaning: "how long a proxy client may take to send its request headers (Kong's client_header_timeout): past it 408 and the connection closed (HTTP/2: GOAWAY); also bounds the TLS handshake and an HTTP/2 connection's wait for its first request. `ms`, `s`, `m`, `h` suffixes, a plain number is seconds" },
  { name: 'GATEHOUSE_KEEPALIVE_TIMEOUT', default: '60s', meaning: "how long an idle keep-alive proxy connection is kept, HTTP/1.1 and HTTP/2 (Kong's keepalive_timeout); same syntax" },
  { name: 'GATEHOUSE_ADMIN_GUI_ORIGINS', default: 'unset (none)', meaning: 'comma-separated origins (`https://manager.example.com`) whose browser pages may call the admin API (CORS with credentials); every other origin gets no CORS headers' },
  { name: 'GATEHOUSE_ADMIN_HOSTS', default: 'unset (none)', meaning: 'comma-separated host names (`name` or `name:port`) the admin API answers to besides `localhost` and loopback addresses when it listens on loopback; any other `Host` gets 421 (DNS rebinding)' },
  { name: 'GATEHOUSE_HEADERS', default: 'server_tokens, latency_tokens, X-Kong-Request-Id', meaning: 'headers the gateway adds (Kong\'s `headers`): `server_tokens` (Via, Server), `latency_tokens` (X-Kong-*-Latency), single names, or `off`' },
  { name: 'GATEHOUSE_WORKERS', default: 'the number of cores (a container\'s CPU quota counts)', meaning: 'proxy worker processes of a data plane (`data-plane` and `start`), sharing its ports; the primary process keeps the sync, the status API and the node\'s shared state (local rate-limit counters, memory proxy-cache, health checks, metrics); `1` runs the proxy in the one process' },
  { name: 'GATEHOUSE_TRACING_INSTRUMENTATIONS', default: 'off', meaning: "spans the data plane records for tracing plugins (Kong's `tracing_instrumentations`): `off` (plugins only propagate headers), `all`, or a comma-separated list of `request`, `router`, `balancer`, `plugin_access`, `plugin_header_filter` (and Kong's `db_query`, `http_client`, `plugin_rewrite`, `dns_query`, accepted and without stages here)" },
  { name: 'GATEHOUSE_TRACING_SAMPLING_RATE', default: '0.01', meaning: "share of traces sampled, 0 to 1 (Kong's `tracing_sampling_rate`); a plugin's `sampling_rate` overrides it" },
  { name: 'GATEHOUSE_ROUTER_FLAVOR', default: 'traditional_compatible', meaning: "Kong's `router_flavor`: `traditional_compatible` (`traditional` routes the same way) or `expressions`, where routes may carry an `expression` in Kong's ATC language and a `priority` instead of the matching fields (control plane: admin and declarative validation)" },
  { name: 'GATEHOUSE_ACCESS_LOG', default: 'stdout', meaning: 'proxy access log, one JSON line per request: `stdout`, `off`, or a file path (reopened on SIGUSR1)' },
];

/** `host:port`, optionally followed by Kong's listener flags (`0.0.0.0:8000 reuseport backlog=16384`). */
export function parseListen(value: string, name: string): Listen {
  const { host, port, flags } = parseListenEntry(value, name);
  return value.trim().includes(' ') ? { host, port, flags } : { host, port };
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, name: string): T {
  if (value === undefined || value === '') return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}

/** GATEHOUSE_ROUTER_FLAVOR (Kong's `router_flavor`); default `traditional_compatible`. */
export function routerFlavorOf(env: NodeJS.ProcessEnv): RouterFlavor {
  return oneOf(env.GATEHOUSE_ROUTER_FLAVOR, ROUTER_FLAVORS, 'traditional_compatible', 'GATEHOUSE_ROUTER_FLAVOR');
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A duration in nginx's syntax (`500ms`, `60s`, `2m`, `1h`; a plain number is seconds), in ms; more than zero. */
export function parseDuration(value: string, name: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(value.trim());
  const ms = m ? Number(m[1]) * DURATION_UNITS[m[2] ?? 's']! : NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > 2_147_483_647) throw new Error(`${name} must be a duration such as 60s, 500ms or 2m, got '${value}'`);
  return ms;
}

/** GATEHOUSE_WORKERS: a whole number from 1 to 256; unset or empty → one per usable core (a container's CPU quota counts). */
export function parseWorkers(value: string | undefined, cores: () => number = usableCores): number {
  if (value === undefined || value.trim() === '') return cores();
  const n = Number(value.trim());
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`GATEHOUSE_WORKERS must be a whole number from 1 to 256, got '${value}'`);
  return n;
}

/** One stream listener (Kong's `stream_listen` entry): its address, TLS termination, UDP and the PROXY protocol. */
export interface StreamListen {
  host: string;
  port: number;
  ssl: boolean;
  udp: boolean;
  proxyProtocol: boolean;
}

/** GATEHOUSE_STREAM_LISTEN in Kong's syntax; unset, empty or `off` is none. */
function streamListenOf(value: string | undefined): StreamListen[] {
  if (value === undefined || value.trim() === '') return [];
  return (parseListenList(value, 'GATEHOUSE_STREAM_LISTEN') ?? []).map(({ host, port, flags }) => {
    if (flags.udp && flags.proxyProtocol) throw new Error(`GATEHOUSE_STREAM_LISTEN: proxy_protocol is for TCP listeners, not with udp (${host}:${port})`);
    return { host, port, ssl: flags.ssl, udp: flags.udp, proxyProtocol: flags.proxyProtocol };
  });
}

/** GATEHOUSE_PROXY_LISTEN in Kong's syntax: its first entry (with its flags), and whether it carries `http2`. */
function proxyListenOf(value: string): { proxyListen: Listen; proxyHttp2: boolean } {
  const proxyListen = parseListen(value, 'GATEHOUSE_PROXY_LISTEN');
  return { proxyListen, proxyHttp2: proxyListen.flags?.http2 === true };
}

/** GATEHOUSE_CLUSTER_DP_LABELS (Kong's cluster_dp_labels): `name:value` pairs, comma-separated, Kong's character rules. */
export function parseDataPlaneLabels(value: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of (value ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf(':');
    const name = pair.slice(0, at);
    const text = pair.slice(at + 1);
    const valid = /^[a-zA-Z0-9]([a-zA-Z0-9._:-]{0,61}[a-zA-Z0-9])?$/;
    if (at <= 0 || !valid.test(name) || !valid.test(text) || name.startsWith('kong')) throw new Error(`GATEHOUSE_CLUSTER_DP_LABELS: invalid label '${pair}' (name:value, letters, digits, '.', '-', '_', ':', names not starting with 'kong')`);
    labels[name] = text;
  }
  return labels;
}

/**
 * GATEHOUSE_REAL_IP_HEADER: a header name, or `proxy_protocol` (the client the PROXY header names), which needs a
 * proxy listener with the `proxy_protocol` flag, as Kong requires.
 */
export function parseRealIpHeader(value: string | undefined, proxyListens: readonly (Listen | null)[] | null = []): string | null {
  if (value === undefined || value.trim() === '') return null;
  const name = value.trim();
  if (name === 'proxy_protocol') {
    // a control plane opens no proxy listener: nothing to check
    if (proxyListens !== null && !proxyListens.some((l) => l?.flags?.proxyProtocol === true)) throw new Error('GATEHOUSE_REAL_IP_HEADER=proxy_protocol needs the proxy_protocol flag on GATEHOUSE_PROXY_LISTEN or GATEHOUSE_PROXY_TLS_LISTEN');
    return name;
  }
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) throw new Error(`GATEHOUSE_REAL_IP_HEADER must be a header name, got '${value}'`);
  return name;
}

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
    upstreamCaBundle: (env.GATEHOUSE_UPSTREAM_CA_BUNDLE ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '' && v !== 'system'),
    dnsResolver: (env.GATEHOUSE_DNS_RESOLVER ?? '').split(',').map((v) => v.trim()).filter(Boolean),
    dnsOrder: parseDnsOrder(env.GATEHOUSE_DNS_ORDER),
    logLevel: oneOf(env.GATEHOUSE_LOG_LEVEL, ['debug', 'info', 'warn', 'error'] as const, 'info', 'GATEHOUSE_LOG_LEVEL'),
    untrustedLua: parseUntrustedLua(env.GATEHOUSE_UNTRUSTED_LUA, env.GATEHOUSE_UNTRUSTED_LUA_SANDBOX_REQUIRES, env.GATEHOUSE_UNTRUSTED_LUA_SANDBOX_ENVIRONMENT),
    underscoreHeaders: oneOf(env.GATEHOUSE_UNDERSCORE_HEADERS, ['on', 'off'] as const, 'off', 'GATEHOUSE_UNDERSCORE_HEADERS') === 'on',
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

/** GATEHOUSE_TRACING_INSTRUMENTATIONS and GATEHOUSE_TRACING_SAMPLING_RATE, refused with Kong's messages. */
export function readTracing(env: NodeJS.ProcessEnv): TracingSettings {
  const instrumentations = parseTracingInstrumentations(env.GATEHOUSE_TRACING_INSTRUMENTATIONS ?? 'off');
  const raw = env.GATEHOUSE_TRACING_SAMPLING_RATE;
  const samplingRate = raw === undefined || raw.trim() === '' ? 0.01 : Number(raw);
  if (!Number.isFinite(samplingRate) || samplingRate < 0 || samplingRate > 1) throw new Error('tracing_sampling_rate must be between 0 and 1');
  return { instrumentations, samplingRate };
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
