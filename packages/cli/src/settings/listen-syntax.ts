/**
 * Kong's listener syntax: `<ip>:<port> [flag…]`, several entries separated by commas, or `off`
 * (`0.0.0.0:8000 reuseport backlog=16384, 0.0.0.0:8443 http2 ssl reuseport backlog=16384`).
 */
export interface ListenFlags {
  ssl: boolean;
  http2: boolean;
  proxyProtocol: boolean;
  reuseport: boolean;
  /** the listen queue's length (`backlog=N`); null = the system's default */
  backlog: number | null;
  /** `udp` (stream listeners only) */
  udp: boolean;
}

export interface ListenEntry {
  host: string;
  port: number;
  flags: ListenFlags;
}

export const NO_FLAGS: Readonly<ListenFlags> = Object.freeze({ ssl: false, http2: false, proxyProtocol: false, reuseport: false, backlog: null, udp: false });

/** nginx flags Kong accepts that change nothing a Node listener can do; accepted so a Kong value parses */
const ACCEPTED_WITHOUT_EFFECT = /^(deferred|bind|ipv6only=(on|off)|so_keepalive=(on|off|\w*:\w*:\d*))$/;

function parseFlags(words: string[], name: string, entry: string): ListenFlags {
  const flags: ListenFlags = { ...NO_FLAGS };
  for (const word of words) {
    const backlog = /^backlog=(\d+)$/.exec(word);
    if (word === 'ssl') flags.ssl = true;
    else if (word === 'http2') flags.http2 = true;
    else if (word === 'proxy_protocol') flags.proxyProtocol = true;
    else if (word === 'reuseport') flags.reuseport = true;
    else if (word === 'udp') flags.udp = true;
    else if (backlog) flags.backlog = Number(backlog[1]);
    else if (!ACCEPTED_WITHOUT_EFFECT.test(word)) {
      throw new Error(`${name}: unknown flag '${word}' in '${entry}' (ssl, http2, proxy_protocol, reuseport, backlog=N, deferred, bind, ipv6only=on|off, so_keepalive=…)`);
    }
  }
  return flags;
}

/** One entry: `host:port`, `[v6]:port` or `*:port`, then flags. */
export function parseListenEntry(entry: string, name: string): ListenEntry {
  const words = entry.trim().split(/\s+/);
  const m = /^(\[[^\]]*\]|[^\s]*):(\d+)$/.exec(words[0] ?? '');
  if (!m) throw new Error(`${name} must be host:port, got '${entry.trim()}'`);
  const port = Number(m[2]);
  if (port > 65535) throw new Error(`${name}: port out of range in '${entry.trim()}'`);
  const host = m[1]!.replace(/^\[|\]$/g, '');
  return { host: host === '' || host === '*' ? '0.0.0.0' : host, port, flags: parseFlags(words.slice(1), name, entry.trim()) };
}

/** A whole Kong listen value: its entries, or null for `off`. */
export function parseListenList(value: string, name: string): ListenEntry[] | null {
  if (value.trim() === 'off') return null;
  const entries = value.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) throw new Error(`${name}: empty entry in '${value}'`);
  return entries.map((e) => parseListenEntry(e, name));
}

/** `host:port flags…` written back (IPv6 hosts in brackets). */
export function formatListenEntry(entry: ListenEntry): string {
  const host = entry.host.includes(':') ? `[${entry.host}]` : entry.host;
  const f = entry.flags;
  const words = [`${host}:${entry.port}`];
  // Kong's order: `0.0.0.0:8443 http2 ssl`
  if (f.http2) words.push('http2');
  if (f.ssl) words.push('ssl');
  if (f.proxyProtocol) words.push('proxy_protocol');
  if (f.reuseport) words.push('reuseport');
  if (f.udp) words.push('udp');
  if (f.backlog !== null) words.push(`backlog=${f.backlog}`);
  return words.join(' ');
}
