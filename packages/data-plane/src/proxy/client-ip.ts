import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { proxiedAddressesOf } from '../proxy-protocol/accept';

/** An address as the gateway reports it: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) shown as plain IPv4. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** The address of the peer that opened the connection. */
export function peerAddress(req: IncomingMessage): string {
  return plainAddress(req.socket.remoteAddress ?? '');
}

/**
 * The proxies whose `X-Forwarded-For` is believed (the data plane's `trustedIps`, e.g. GATEHOUSE_TRUSTED_IPS): CIDR
 * blocks or single addresses, IPv4 or IPv6. Requests from anyone else are identified by their socket address, so a
 * client cannot choose its own address (and with it its rate-limiting budget) by sending the header.
 */
export class TrustedProxies {
  private readonly list = new BlockList();

  /**
   * `realIp` (Kong's real_ip_header and real_ip_recursive, GATEHOUSE_REAL_IP_HEADER/_RECURSIVE): when given, only that
   * header names the client, as nginx reads it (`proxy_protocol`: the connection's PROXY header); when absent, the
   * default described at `clientIp`.
   */
  constructor(
    entries: readonly string[],
    private readonly realIp: { header: string; recursive: boolean } | null = null,
  ) {
    for (const raw of entries) {
      const entry = raw.trim();
      if (entry === '') continue;
      const slash = entry.indexOf('/');
      const address = slash < 0 ? entry : entry.slice(0, slash);
      const family = isIP(address);
      const prefix = slash < 0 ? (family === 6 ? 128 : 32) : Number(entry.slice(slash + 1));
      const maxPrefix = family === 6 ? 128 : 32;
      if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > maxPrefix || (slash >= 0 && !/^\d+$/.test(entry.slice(slash + 1)))) {
        throw new Error(`invalid trusted IP or CIDR block '${entry}'`);
      }
      this.list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
    }
  }

  trusts(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }

  /**
   * The client's address: the socket peer; when that peer is trusted, the right-most `X-Forwarded-For` entry that is
   * not a trusted proxy (nginx's real_ip_recursive), or, when the request has no `X-Forwarded-For`, its `X-Real-IP`
   * (Kong's default `real_ip_header`), IPv4 or IPv6. An entry that is not an address stops the walk at the last
   * trusted hop; a list of trusted proxies only gives its left-most entry; an `X-Real-IP` that is not an address is
   * ignored. `X-Forwarded-For` comes first because most proxies append to it and pass a client's own `X-Real-IP` on
   * untouched: behind them the client could otherwise choose its address.
   */
  clientIp(req: IncomingMessage): string {
    let client = peerAddress(req);
    if (!this.trusts(client)) return client;
    if (this.realIp !== null) {
      // `proxy_protocol`: the client the connection's PROXY header named (nginx's $proxy_protocol_addr)
      if (this.realIp.header === 'proxy_protocol') return plainAddress(proxiedAddressesOf(req.socket)?.sourceAddress ?? client);
      return this.fromHeader(req, client, this.realIp);
    }
    const header = req.headers['x-forwarded-for'];
    if (header === undefined) return realIp(req.headers['x-real-ip']) ?? client;
    const entries = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = plainAddress(entries[i]!.trim());
      if (isIP(entry) === 0) return client;
      client = entry;
      if (!this.trusts(entry)) return client;
    }
    return client;
  }

  /** nginx's realip: the header's last address, or with `recursive` the right-most one that is not a trusted proxy. */
  private fromHeader(req: IncomingMessage, peer: string, realIp: { header: string; recursive: boolean }): string {
    const header = req.headers[realIp.header.toLowerCase()];
    if (header === undefined) return peer;
    const entries = (Array.isArray(header) ? header.join(',') : header).split(',').map((e) => unbracket(e.trim()));
    if (!realIp.recursive) {
      const last = entries[entries.length - 1] ?? '';
      return isIP(last) === 0 ? peer : plainAddress(last);
    }
    let client = peer;
    for (let i = entries.length - 1; i >= 0; i--) {
      if (isIP(entries[i]!) === 0) return client;
      client = plainAddress(entries[i]!);
      if (!this.trusts(client)) return client;
    }
    return client;
  }
}

const unbracket = (value: string) => (value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value);

/** The address an `X-Real-IP` header gives (`[v6]` brackets allowed), or null when it is not one address. */
function realIp(header: string | string[] | undefined): string | null {
  if (header === undefined || Array.isArray(header)) return null;
  let value = header.trim();
  if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1);
  return isIP(value) === 0 ? null : plainAddress(value);
}

/** Splits a comma-separated list such as GATEHOUSE_TRUSTED_IPS (`10.0.0.0/8, 192.168.1.7, ::1`). */
export function parseTrustedIps(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
