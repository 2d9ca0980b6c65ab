import { formatListenEntry, NO_FLAGS } from '../listen-syntax';
import { currentLogLevel } from '../../logger';
import type { Listen, Settings } from '../index';

/** One of Kong's `*_listeners` entries. */
function listenerEntry(listen: Listen, ssl = false): Record<string, unknown> {
  // the TLS proxy listener serves HTTP/2 by ALPN: Kong lists it `http2 ssl`
  const flags = { ...(listen.flags ?? NO_FLAGS), ...(ssl ? { ssl: true, http2: true } : {}) };
  const entry = { host: listen.host, port: listen.port, flags };
  return {
    ip: listen.host,
    port: listen.port,
    ssl: flags.ssl,
    http2: flags.http2,
    proxy_protocol: flags.proxyProtocol,
    deferred: false,
    bind: false,
    reuseport: flags.reuseport,
    backlog: flags.backlog === null ? null : `=${flags.backlog}`,
    listener: formatListenEntry(entry),
  };
}

/** The Postgres settings Kong reports, read back from DATABASE_URL (the password never). */
function postgres(url: string | null): Record<string, unknown> {
  if (!url) return {};
  try {
    const u = new URL(url);
    const sslmode = u.searchParams.get('sslmode');
    return {
      pg_host: u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
      pg_port: Number(u.port || 5432),
      pg_user: decodeURIComponent(u.username) || null,
      pg_password: u.password ? '******' : null,
      pg_database: decodeURIComponent(u.pathname.slice(1)) || null,
      pg_ssl: sslmode !== null && sslmode !== 'disable',
      pg_ssl_verify: sslmode === 'verify-full' || sslmode === 'verify-ca',
      pg_schema: /search_path=(\S+)/.exec(u.searchParams.get('options') ?? '')?.[1] ?? null,
    };
  } catch {
    return {};
  }
}

const list = (value: string | undefined) => (value ?? '').split(',').map((v) => v.trim()).filter(Boolean);

/**
 * Kong's `configuration` keys that GET / reports and Kong Manager's Overview and the ingress controller read: the
 * datastore, every listener, the router flavour and the settings Gatehouse shares with Kong.
 */
export function kongConfiguration(settings: Settings, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const proxy = settings.role === 'control_plane' ? [] : [listenerEntry(settings.proxyListen), ...(settings.proxyTlsListen ? [listenerEntry(settings.proxyTlsListen, true)] : [])];
  const database = env.GATEHOUSE_DATABASE === 'off' ? 'off' : 'postgres';
  return {
    database,
    ...postgres(settings.databaseUrl),
    ...(settings.databaseUrl ? {} : { pg_host: null, pg_port: null, pg_database: null, pg_user: null }),
    proxy_listeners: proxy,
    proxy_listen: proxy.map((l) => l.listener),
    admin_listeners: [listenerEntry(settings.adminListen)],
    admin_listen: [formatListenEntry({ ...settings.adminListen, flags: settings.adminListen.flags ?? NO_FLAGS })],
    status_listeners: settings.statusListen ? [listenerEntry(settings.statusListen)] : [],
    stream_listeners: [],
    admin_gui_listeners: [],
    cluster_listeners: [],
    router_flavor: env.GATEHOUSE_ROUTER_FLAVOR || 'traditional_compatible',
    log_level: currentLogLevel(),
    headers: list(settings.headers),
    headers_upstream: list(env.GATEHOUSE_HEADERS_UPSTREAM ?? 'X-Kong-Request-Id'),
    trusted_ips: settings.trustedIps,
    real_ip_header: settings.realIpHeader ?? 'X-Real-IP',
    real_ip_recursive: settings.realIpRecursive ? 'on' : 'off',
    error_default_type: env.GATEHOUSE_ERROR_DEFAULT_TYPE || 'text/plain',
    nginx_worker_processes: String(settings.workers),
    dns_resolver: settings.dnsResolver,
    dns_order: settings.dnsOrder,
    lua_ssl_trusted_certificate: settings.upstreamCaBundle.length > 0 ? settings.upstreamCaBundle : ['system'],
    admin_gui_url: settings.adminGuiOrigins,
    prefix: settings.dataDir,
    wasm: false,
    untrusted_lua: settings.untrustedLua.mode,
    untrusted_lua_sandbox_requires: settings.untrustedLua.requires,
    untrusted_lua_sandbox_environment: settings.untrustedLua.environment,
    plugins: list(env.GATEHOUSE_PLUGINS || 'bundled'),
  };
}
