import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { countDns, setDns } from './dns-stats';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
  /** seconds the answer may be kept */
  ttl: number;
  /** from an SRV record: the port and weight to use instead of the target's */
  srv?: { port: number; weight: number };
}

/** Turns a target's host name into addresses. Injectable: tests give a resolver of their own. */
export interface HostResolver {
  /** A and AAAA answers; rejects when the name does not resolve */
  resolve(host: string): Promise<ResolvedAddress[]>;
}

/** TTL used for answers that come without one (the system's lookup, /etc/hosts) and as a floor. */
export const DEFAULT_DNS_TTL_SECONDS = 30;
/** how soon a failed lookup is tried again */
export const DNS_ERROR_RETRY_SECONDS = 1;

/** Kong's record types of `dns_order` (CNAME is followed by every lookup); `LAST` is the type that last answered. */
export type DnsRecordType = 'LAST' | 'SRV' | 'A' | 'AAAA' | 'CNAME';
export const DEFAULT_DNS_ORDER: readonly DnsRecordType[] = ['LAST', 'SRV', 'A', 'CNAME'];

/** Kong's `dns_order` (`GATEHOUSE_DNS_ORDER`): comma-separated types, case-insensitive; throws on an unknown one. */
export function parseDnsOrder(value: string | undefined): DnsRecordType[] {
  if (value === undefined || value.trim() === '') return [...DEFAULT_DNS_ORDER];
  return value.split(',').map((v) => {
    const type = v.trim().toUpperCase();
    if (!['LAST', 'SRV', 'A', 'AAAA', 'CNAME'].includes(type)) throw new Error(`dns_order: invalid entry '${v.trim()}' (LAST, SRV, A, AAAA, CNAME)`);
    return type as DnsRecordType;
  });
}

const isIp = (host: string) => isIP(host) !== 0;

/**
 * The system's DNS, or the servers given (Kong's `dns_resolver`), asked in Kong's `dns_order`: `SRV` gives the
 * addresses of the records of the lowest priority with their ports and weights (a weight of 0 counts as 1, as in
 * Kong), `A` / `AAAA` the addresses with their TTLs; the first type that answers is used, and `LAST` tries the type
 * that answered last for the name first. With the system's servers, a name none answers (a name only the hosts file
 * knows, `localhost`) goes to the system's lookup with the default TTL.
 */
export class SystemResolver implements HostResolver {
  private readonly resolver: dns.Resolver | null = null;
  private readonly last = new Map<string, 'SRV' | 'A' | 'AAAA'>();
  private readonly order: readonly DnsRecordType[];

  /** `servers`: DNS servers (`ip` or `ip:port`) asked instead of the system's; then the hosts file is not read */
  constructor(servers: readonly string[] = [], order: readonly DnsRecordType[] = DEFAULT_DNS_ORDER) {
    this.order = order;
    if (servers.length > 0) {
      this.resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
      this.resolver.setServers([...servers]);
    }
  }

  async resolve(host: string): Promise<ResolvedAddress[]> {
    const last = this.last.get(host);
    const asked = (t: DnsRecordType): Array<'SRV' | 'A' | 'AAAA'> => {
      const type = t === 'LAST' ? last : t;
      return type === 'SRV' || type === 'A' || type === 'AAAA' ? [type] : [];
    };
    const types = [...new Set(this.order.flatMap(asked))];
    let firstError: unknown = null;
    for (const type of types) {
      countDns(host, type, 'runs');
      try {
        const out = type === 'SRV' ? await this.srv(host) : await this.query(host, type);
        if (out.length > 0) {
          this.last.set(host, type);
          return out;
        }
      } catch (err) {
        firstError ??= err;
      }
    }
    if (this.resolver !== null) throw firstError ?? new Error(`no address for ${host}`);
    countDns(host, 'A/AAAA', 'runs');
    const looked = await dns.lookup(host, { all: true });
    return looked.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4, ttl: DEFAULT_DNS_TTL_SECONDS }));
  }

  /** One question, counted in the statistics; an empty answer is an empty list. */
  private async query(host: string, type: 'A' | 'AAAA'): Promise<ResolvedAddress[]> {
    const r = this.resolver ?? dns;
    const started = Date.now();
    countDns(host, type, 'query');
    try {
      const answers = type === 'A' ? await r.resolve4(host, { ttl: true }) : await r.resolve6(host, { ttl: true });
      countDns(host, type, 'query_succ');
      return answers.map((a) => ({ address: a.address, family: type === 'A' ? 4 : 6, ttl: a.ttl }));
    } catch (err) {
      countDns(host, type, `query_fail:${(err as { code?: string }).code ?? 'error'}`);
      if ((err as { code?: string }).code === 'ENODATA') return [];
      throw err;
    } finally {
      setDns(host, type, 'query_last_time', Date.now() - started);
    }
  }

  private async srv(host: string): Promise<ResolvedAddress[]> {
    const r = this.resolver ?? dns;
    const started = Date.now();
    countDns(host, 'SRV', 'query');
    let records: Awaited<ReturnType<typeof dns.resolveSrv>>;
    try {
      records = await r.resolveSrv(host);
      countDns(host, 'SRV', 'query_succ');
    } catch (err) {
      countDns(host, 'SRV', `query_fail:${(err as { code?: string }).code ?? 'error'}`);
      if (['ENODATA', 'ENOTFOUND'].includes((err as { code?: string }).code ?? '')) return [];
      throw err;
    } finally {
      setDns(host, 'SRV', 'query_last_time', Date.now() - started);
    }
    if (records.length === 0) return [];
    const lowest = Math.min(...records.map((rec) => rec.priority));
    const chosen = records.filter((rec) => rec.priority === lowest);
    const resolved = await Promise.all(
      chosen.map(async (rec) => {
        const srv = { port: rec.port, weight: rec.weight === 0 ? 1 : rec.weight };
        if (isIp(rec.name)) return [{ address: rec.name, family: isIP(rec.name) === 6 ? 6 : 4, ttl: DEFAULT_DNS_TTL_SECONDS, srv } as ResolvedAddress];
        const addresses = await this.query(rec.name, 'A').catch(() => [] as ResolvedAddress[]);
        return addresses.map((a) => ({ ...a, srv }));
      }),
    );
    return resolved.flat();
  }
}

/**
 * A resolver answering from a table that can change at run time (names mapped to addresses with a TTL); a name not
 * in it fails like NXDOMAIN. For tests and for fixed name maps.
 */
export class StaticResolver implements HostResolver {
  private readonly table = new Map<string, ResolvedAddress[]>();
  /** how many lookups each name had */
  readonly lookups = new Map<string, number>();

  set(host: string, addresses: Array<string | ResolvedAddress>, ttl = DEFAULT_DNS_TTL_SECONDS): void {
    this.table.set(
      host.toLowerCase(),
      addresses.map((a) => (typeof a === 'string' ? { address: a, family: a.includes(':') ? 6 : 4, ttl } : a)),
    );
  }

  delete(host: string): void {
    this.table.delete(host.toLowerCase());
  }

  async resolve(host: string): Promise<ResolvedAddress[]> {
    const key = host.toLowerCase();
    this.lookups.set(key, (this.lookups.get(key) ?? 0) + 1);
    const found = this.table.get(key);
    if (!found || found.length === 0) {
      const err = new Error(`queryA ENOTFOUND ${host}`) as Error & { code: string };
      err.code = 'ENOTFOUND';
      throw err;
    }
    return found.map((a) => ({ ...a }));
  }
}
