import { isAbsolute, join } from 'node:path';
import { proxyListeners, singleListener, type Note } from './listeners';
import type { KongValues } from './sources';

/** How one Kong setting becomes Gatehouse variables: the value, all Kong values (for those that depend on others), a note sink. */
export type KongConversion = (value: string, all: KongValues, note: Note) => Record<string, string>;

function flag(name: string, value: string): 'on' | 'off' {
  const v = value.toLowerCase();
  if (v === 'on' || v === 'true') return 'on';
  if (v === 'off' || v === 'false') return 'off';
  throw new Error(`${name} must be on or off, got '${value}'`);
}

const same = (target: string): KongConversion => (value) => ({ [target]: value });
const list = (value: string) => value.split(',').map((v) => v.trim()).filter(Boolean);

const LOG_LEVELS: Record<string, string> = { debug: 'debug', info: 'info', notice: 'info', warn: 'warn', error: 'error', crit: 'error', alert: 'error', emerg: 'error' };
const ROLES: Record<string, string> = { traditional: 'all', control_plane: 'control_plane', data_plane: 'data_plane' };

function logLevel(value: string): Record<string, string> {
  const level = LOG_LEVELS[value.toLowerCase()];
  if (!level) throw new Error(`log_level has an invalid value: '${value}' (${Object.keys(LOG_LEVELS).join(', ')})`);
  return { GATEHOUSE_LOG_LEVEL: level };
}

function role(value: string): Record<string, string> {
  const r = ROLES[value];
  if (!r) throw new Error(`role has an invalid value: '${value}' (traditional, control_plane, data_plane)`);
  return { GATEHOUSE_ROLE: r };
}

function workers(value: string): Record<string, string> {
  if (value === 'auto') return { GATEHOUSE_WORKERS: '' };
  return { GATEHOUSE_WORKERS: value };
}

function trustedIps(value: string, _all: KongValues, note: Note): Record<string, string> {
  const entries = list(value);
  const kept = entries.filter((e) => e !== 'unix:');
  if (kept.length < entries.length) note("'unix:' is dropped: the proxy listens on TCP only");
  return { GATEHOUSE_TRUSTED_IPS: kept.join(',') };
}

/** Kong's admin_gui_url lists Kong Manager's URLs; the admin API lets their origins call it. */
function adminGuiOrigins(value: string): Record<string, string> {
  const origins = list(value).map((url) => {
    try {
      return new URL(url).origin;
    } catch {
      throw new Error(`admin_gui_url: '${url}' is not a URL`);
    }
  });
  return { GATEHOUSE_ADMIN_GUI_ORIGINS: origins.join(',') };
}

/** A Kong log path: `off`, `/dev/stdout`, or a file (relative ones under `prefix`, as Kong places them). */
function accessLog(value: string, all: KongValues): Record<string, string> {
  if (value === 'off') return { GATEHOUSE_ACCESS_LOG: 'off' };
  if (value === '/dev/stdout') return { GATEHOUSE_ACCESS_LOG: 'stdout' };
  const prefix = all.get('prefix')?.value ?? '/usr/local/kong';
  return { GATEHOUSE_ACCESS_LOG: isAbsolute(value) ? value : join(prefix, value) };
}

function firstOf(target: string): KongConversion {
  return (value, _all, note) => {
    const items = list(value);
    if (items.length > 1) note(`only the first entry is used: ${items[0]}`);
    return { [target]: items[0] ?? '' };
  };
}

/** Every Kong setting with a Gatehouse meaning (the database group is in database.ts). */
export const KONG_TO_GATEHOUSE: Record<string, KongConversion> = {
  role: (v) => role(v),
  prefix: same('GATEHOUSE_DATA_DIR'),
  proxy_listen: (v, _all, note) => proxyListeners(v, note),
  admin_listen: (v, _all, note) => singleListener('admin_listen', 'GATEHOUSE_ADMIN_LISTEN', false, true)(v, note),
  status_listen: (v, _all, note) => singleListener('status_listen', 'GATEHOUSE_STATUS_LISTEN', true)(v, note),
  stream_listen: same('GATEHOUSE_STREAM_LISTEN'),
  declarative_config: same('GATEHOUSE_DECLARATIVE_CONFIG'),
  headers: same('GATEHOUSE_HEADERS'),
  headers_upstream: same('GATEHOUSE_HEADERS_UPSTREAM'),
  trusted_ips: trustedIps,
  real_ip_header: same('GATEHOUSE_REAL_IP_HEADER'),
  real_ip_recursive: (v) => ({ GATEHOUSE_REAL_IP_RECURSIVE: flag('real_ip_recursive', v) }),
  log_level: (v) => logLevel(v),
  nginx_worker_processes: (v) => workers(v),
  nginx_main_worker_processes: (v) => workers(v),
  plugins: same('GATEHOUSE_PLUGINS'),
  untrusted_lua: same('GATEHOUSE_UNTRUSTED_LUA'),
  untrusted_lua_sandbox_requires: same('GATEHOUSE_UNTRUSTED_LUA_SANDBOX_REQUIRES'),
  untrusted_lua_sandbox_environment: same('GATEHOUSE_UNTRUSTED_LUA_SANDBOX_ENVIRONMENT'),
  dns_resolver: same('GATEHOUSE_DNS_RESOLVER'),
  dns_order: same('GATEHOUSE_DNS_ORDER'),
  lua_ssl_trusted_certificate: same('GATEHOUSE_UPSTREAM_CA_BUNDLE'),
  admin_gui_url: (v) => adminGuiOrigins(v),
  error_default_type: same('GATEHOUSE_ERROR_DEFAULT_TYPE'),
  router_flavor: same('GATEHOUSE_ROUTER_FLAVOR'),
  cluster_dp_labels: same('GATEHOUSE_CLUSTER_DP_LABELS'),
  ssl_cert: firstOf('GATEHOUSE_PROXY_TLS_CERT'),
  admin_ssl_cert: firstOf('GATEHOUSE_ADMIN_TLS_CERT'),
  admin_ssl_cert_key: firstOf('GATEHOUSE_ADMIN_TLS_KEY'),
  ssl_cert_key: firstOf('GATEHOUSE_PROXY_TLS_KEY'),
  proxy_access_log: accessLog,
  nginx_proxy_client_header_timeout: same('GATEHOUSE_CLIENT_HEADER_TIMEOUT'),
  nginx_http_client_header_timeout: same('GATEHOUSE_CLIENT_HEADER_TIMEOUT'),
  nginx_http_keepalive_timeout: same('GATEHOUSE_KEEPALIVE_TIMEOUT'),
  nginx_proxy_keepalive_timeout: same('GATEHOUSE_KEEPALIVE_TIMEOUT'),
};

/** Why a known Kong setting changes nothing in Gatehouse, where a reason says more than "no equivalent". */
export const INAPPLICABLE_REASONS: Array<[RegExp, string]> = [
  [/^cluster_(control_plane|listen|cert|cert_key|ca_cert|mtls|server_name|ocsp|use_proxy|telemetry_.*)$/, 'nodes meet over Redis (REDIS_URL) and sign snapshots with GATEHOUSE_CLUSTER_SECRET'],
  [/^pg_ro_/, 'no read-only Postgres replica is used'],
  [/^(pg_timeout|pg_max_concurrent_queries|pg_semaphore_timeout|pg_keepalive_timeout|pg_pool_size|pg_backlog)$/, 'the Postgres pool keeps its own sizes and timeouts'],
  [/_(error|access)_log$/, 'errors go to stderr as JSON lines; the access log is proxy_access_log'],
  [/^(nginx_|lua_|mem_cache_size|lmdb_|worker_)/, 'an nginx/OpenResty tuning with no Node counterpart'],
  [/^(wasm|wasm_.*)$/, 'WebAssembly filters are not supported (as Kong with wasm = off)'],
];
