import { lookup } from 'node:dns';
import { isIP } from 'node:net';
import { nowMs, SpanKind, type RequestSpans } from '@gatehouse/plugins';
import { DEFAULT_DNS_TTL_SECONDS } from '../balancer/dns';

/**
 * How long a name's address stands for later requests' spans (ms). Kong's DNS client keeps a record for its TTL; the
 * system's lookup, which resolves service hosts here, tells none: the balancer's TTL for such answers is used.
 */
const KEPT_MS = DEFAULT_DNS_TTL_SECONDS * 1000;
/** names remembered at most; past that, the oldest is forgotten */
const MAX_NAMES = 10_000;

interface KnownAddress {
  ip: string;
  until: number;
}

const known = new Map<string, KnownAddress>();

function remember(host: string, ip: string): void {
  known.delete(host);
  if (known.size >= MAX_NAMES) known.delete(known.keys().next().value!);
  known.set(host, { ip, until: Date.now() + KEPT_MS });
}

/** whether the service's host is a name (not an address, bracketed IPv6 included) and dns_query is recorded */
export function tracesDnsQuery(spans: RequestSpans | null, host: string): spans is RequestSpans {
  return spans !== null && spans.has('dns_query') && isIP(host) === 0 && !host.startsWith('[');
}

/**
 * Kong's `dns_query` instrumentation for a service named by a host name, which Kong's balancer resolves on every
 * request through its DNS client: a `kong.dns` span (client, under the request span) with `dns.record.domain`,
 * `dns.record.port` and `dns.record.ip`. A name resolved less than KEPT_MS ago is read from memory (an instant span,
 * as Kong's cache answers); otherwise it is looked up, the span lasts the lookup, a failed one has error status and no
 * address, and `then` runs once it is over. True when `then` was deferred, false when the caller goes on at once.
 */
export function traceDnsQuery(spans: RequestSpans, host: string, port: number, then: () => void): boolean {
  const span = spans.start('kong.dns', SpanKind.CLIENT, { 'dns.record.domain': host, 'dns.record.port': port });
  const cached = known.get(host);
  if (cached !== undefined && cached.until > Date.now()) {
    span.attributes['dns.record.ip'] = cached.ip;
    span.endMs = span.startMs;
    return false;
  }
  lookup(host, (err, address) => {
    if (err === null) {
      span.attributes['dns.record.ip'] = address;
      remember(host, address);
    } else span.status = 2;
    span.endMs = nowMs();
    then();
  });
  return true;
}
