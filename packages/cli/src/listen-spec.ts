/**
 * Kong's listen strings (`proxy_listen`, `stream_listen`): `addr:port [flag …]`, several comma-separated. The flags
 * read here: `ssl`, `http2`, `udp`, `proxy_protocol`, `reuseport`, `deferred`, `bind`, `backlog=N`,
 * `ipv6only=on|off`, `so_keepalive=…`; another word is refused by name. Every listener setting that takes Kong's
 * syntax is parsed here.
 */
export interface ListenSpec {
  host: string;
  port: number;
  ssl: boolean;
  http2: boolean;
  udp: boolean;
  proxyProtocol: boolean;
  reuseport: boolean;
  backlog: number | null;
}

const FLAGS = new Set(['ssl', 'http2', 'udp', 'proxy_protocol', 'reuseport', 'deferred', 'bind']);
const VALUED = /^(backlog|ipv6only|so_keepalive)=(.+)$/;

/** One `addr:port [flags]` entry. */
export function parseListenSpec(entry: string, name: string): ListenSpec {
  const [address, ...words] = entry.trim().split(/\s+/);
  const m = /^(.*):(\d+)$/.exec(address ?? '');
  if (!m) throw new Error(`${name} must be host:port [flags], got '${entry.trim()}'`);
  const port = Number(m[2]);
  if (port > 65535) throw new Error(`${name}: port out of range in '${entry.trim()}'`);
  const spec: ListenSpec = {
    host: m[1]!.replace(/^\[|\]$/g, '') || '0.0.0.0',
    port,
    ssl: false,
    http2: false,
    udp: false,
    proxyProtocol: false,
    reuseport: false,
    backlog: null,
  };
  for (const word of words) {
    const valued = VALUED.exec(word);
    if (valued !== null) {
      if (valued[1] === 'backlog') {
        const backlog = Number(valued[2]);
        if (!Number.isInteger(backlog) || backlog < 1) throw new Error(`${name}: invalid backlog in '${entry.trim()}'`);
        spec.backlog = backlog;
      }
      continue;
    }
    if (!FLAGS.has(word)) throw new Error(`${name}: unknown listen flag '${word}' in '${entry.trim()}'`);
    if (word === 'ssl') spec.ssl = true;
    else if (word === 'http2') spec.http2 = true;
    else if (word === 'udp') spec.udp = true;
    else if (word === 'proxy_protocol') spec.proxyProtocol = true;
    else if (word === 'reuseport') spec.reuseport = true;
  }
  return spec;
}

/** A comma-separated list of entries; `off` or an empty value is none. */
export function parseListenSpecs(value: string | undefined, name: string): ListenSpec[] {
  if (value === undefined || value.trim() === '' || value.trim() === 'off') return [];
  return value.split(',').map((entry) => parseListenSpec(entry, name));
}
