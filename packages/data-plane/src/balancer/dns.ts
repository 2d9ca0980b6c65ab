import { promises as dns } from 'node:dns';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
  /** seconds the answer may be kept */
  ttl: number;
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

/**
 * The system's DNS: A and AAAA records with their TTLs; when the name has neither (a name only the hosts file knows,
 * `localhost`), the system's lookup with the default TTL.
 */
export class SystemResolver implements HostResolver {
  private readonly resolver: dns.Resolver | null = null;

  /** `servers`: DNS servers (`ip` or `ip:port`) asked instead of the system's; then the hosts file is not read */
  constructor(servers: readonly string[] = []) {
    if (servers.length > 0) {
      this.resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
      this.resolver.setServers([...servers]);
    }
  }

  async resolve(host: string): Promise<ResolvedAddress[]> {
    const r = this.resolver ?? dns;
    const [v4, v6] = await Promise.allSettled([r.resolve4(host, { ttl: true }), r.resolve6(host, { ttl: true })]);
    const out: ResolvedAddress[] = [];
    if (v4.status === 'fulfilled') for (const r of v4.value) out.push({ address: r.address, family: 4, ttl: r.ttl });
    if (v6.status === 'fulfilled') for (const r of v6.value) out.push({ address: r.address, family: 6, ttl: r.ttl });
    if (out.length > 0) return out;
    if (this.resolver !== null) throw v4.status === 'rejected' ? v4.reason : new Error(`no address for ${host}`);
    const looked = await dns.lookup(host, { all: true });
    return looked.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4, ttl: DEFAULT_DNS_TTL_SECONDS }));
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
