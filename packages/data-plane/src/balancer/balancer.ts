import type { UpstreamTarget } from '../compile/types';
import { AddressHealth } from './health';
import { HashRing } from './ring';
import type { TargetSpec, UpstreamSpec } from './spec';

/** One resolved target of a target: `ip:port`, its health, its load, and the forwarding targets built for it. */
export class Address {
  readonly key: string;
  readonly health = new AddressHealth();
  /** requests in flight (least-connections, latency) */
  active = 0;
  /** exponentially weighted response time, ms (latency); 0 until measured */
  ewma = 0;
  /** smooth weighted round-robin state */
  current = 0;
  /** bumped when the address leaves the balancer or is rescheduled: the active checker drops older entries */
  checkGeneration = 0;
  private readonly forwards = new WeakMap<UpstreamTarget, UpstreamTarget>();

  constructor(
    readonly ip: string,
    readonly port: number,
    readonly target: TargetState,
    /** the weight of the SRV record the address came from (its port is `port`); null: the target's */
    readonly srvWeight: number | null = null,
  ) {
    this.key = `${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
  }

  get weight(): number {
    return this.srvWeight ?? this.target.spec.weight;
  }

  /** The forwarding target for a service's settings (protocol, path, timeouts) at this address; built once. */
  forwardTarget(service: UpstreamTarget, hostHeader: string | null): UpstreamTarget {
    let built = this.forwards.get(service);
    if (built !== undefined) return built;
    const spec = this.target.spec;
    const origin = `${service.protocol}://${this.key}`;
    const defaultPort = service.protocol === 'https' ? 443 : 80;
    const hostForUrl = spec.kind === 'ipv6' ? `[${spec.host}]` : spec.host;
    built = {
      ...service,
      // the service's TLS settings are part of the key: services with other CAs or client certificates never share
      poolKey: `${origin}|${service.connectTimeout}|${service.tlsVerify ? 'verify' : 'noverify'}|${spec.host}${service.tls ? `|${service.tls.key}` : ''}`,
      origin,
      host: this.ip,
      port: this.port,
      sni: spec.kind === 'name' ? spec.host : undefined,
      hostHeader: hostHeader ?? (this.hostPort() === defaultPort ? hostForUrl : `${hostForUrl}:${this.hostPort()}`),
      balancer: null,
    };
    this.forwards.set(service, built);
    return built;
  }

  /** the port the Host header names: the SRV record's for an address from one, else the target's */
  private hostPort(): number {
    return this.srvWeight === null ? this.target.spec.port : this.port;
  }
}

/** A target of the upstream: its spec and the addresses it resolved to (one for an IP target). */
export class TargetState {
  addresses: Address[] = [];
  /** the last lookup failed: no address is used (Kong's DNS_ERROR) */
  dnsError = false;
  /** epoch ms after which the name is looked up again; 0 = never resolved */
  expiresAt = 0;
  resolving: Promise<void> | null = null;

  constructor(public spec: TargetSpec) {
    if (spec.kind !== 'name') this.addresses = [new Address(spec.host, spec.port, this)];
  }

  get needsDns(): boolean {
    return this.spec.kind === 'name';
  }
}

/**
 * The balancer of one upstream: its targets' addresses and the pick of each algorithm. An address is eligible when
 * its weight is positive and it is healthy; an upstream below its health threshold has none.
 */
export class UpstreamBalancer {
  targets: TargetState[] = [];
  addresses: Address[] = [];
  private ring: HashRing<Address> | null = null;
  private cursor = 0;

  constructor(
    public spec: UpstreamSpec,
    previous?: UpstreamBalancer,
  ) {
    this.adopt(spec, previous);
  }

  /** Takes a new spec, keeping the state (addresses, health, DNS answers) of targets that stay. */
  adopt(spec: UpstreamSpec, previous?: UpstreamBalancer): void {
    this.spec = spec;
    const old = new Map((previous ?? this).targets.map((t) => [t.spec.target, t]));
    this.targets = spec.targets.map((t) => {
      const kept = old.get(t.target);
      if (kept === undefined) return new TargetState(t);
      kept.spec = t;
      return kept;
    });
    this.rebuild();
  }

  /** Recomputes the address list and the ring after a target or DNS change. */
  rebuild(): void {
    const addresses: Address[] = [];
    for (const target of this.targets) if (!target.dnsError) for (const a of target.addresses) addresses.push(a);
    this.addresses = addresses;
    this.ring = this.spec.algorithm === 'consistent-hashing' ? new HashRing(addresses, this.spec.slots) : null;
  }

  /** names still waiting for their first answer */
  get pending(): Promise<void>[] {
    const out: Promise<void>[] = [];
    for (const t of this.targets) if (t.needsDns && t.expiresAt === 0 && t.resolving !== null) out.push(t.resolving);
    return out;
  }

  private eligible(a: Address, tried: ReadonlySet<Address> | null): boolean {
    return a.weight > 0 && a.health.healthy && (tried === null || !tried.has(a));
  }

  /** Kong's `healthchecks.threshold`: below this share of healthy weight (percent) the whole upstream is down. */
  private aboveThreshold(): boolean {
    const threshold = this.spec.healthchecks.threshold;
    if (threshold <= 0) return true;
    let total = 0;
    let healthy = 0;
    for (const a of this.addresses) {
      total += a.weight;
      if (a.health.healthy) healthy += a.weight;
    }
    return total > 0 && (healthy * 100) / total >= threshold;
  }

  /** whether a request could get an address now (the balancer's own health) */
  pickable(): boolean {
    return this.aboveThreshold() && this.addresses.some((a) => this.eligible(a, null));
  }

  /** The address for this request; null when none is eligible. `tried` holds the addresses a retry must avoid. */
  pick(hashKey: string | null, tried: ReadonlySet<Address> | null): Address | null {
    if (this.addresses.length === 0 || !this.aboveThreshold()) return null;
    switch (this.spec.algorithm) {
      case 'consistent-hashing':
        if (hashKey !== null && this.ring !== null) return this.ring.lookup(hashKey, (a) => this.eligible(a, tried));
        return this.roundRobin(tried);
      case 'least-connections':
        return this.lowest(tried, (a) => (a.active + 1) / a.weight);
      case 'latency':
        return this.lowest(tried, (a) => a.ewma * (a.active + 1));
      default:
        return this.roundRobin(tried);
    }
  }

  /** nginx's smooth weighted round-robin: even spread, exact proportions over every sum-of-weights requests */
  private roundRobin(tried: ReadonlySet<Address> | null): Address | null {
    let best: Address | null = null;
    let total = 0;
    for (const a of this.addresses) {
      if (!this.eligible(a, tried)) continue;
      a.current += a.weight;
      total += a.weight;
      if (best === null || a.current > best.current) best = a;
    }
    if (best !== null) best.current -= total;
    return best;
  }

  /** the eligible address with the lowest score; ties go round the list so equal addresses share the load */
  private lowest(tried: ReadonlySet<Address> | null, score: (a: Address) => number): Address | null {
    const list = this.addresses;
    const n = list.length;
    let best: Address | null = null;
    let bestScore = Infinity;
    const start = this.cursor++ % n;
    for (let i = 0; i < n; i++) {
      const a = list[(start + i) % n]!;
      if (!this.eligible(a, tried)) continue;
      const s = score(a);
      if (s < bestScore) {
        best = a;
        bestScore = s;
      }
    }
    return best;
  }
}

/** weight of a new latency sample in the moving average */
export const LATENCY_EWMA_ALPHA = 0.3;

export function recordLatency(a: Address, ms: number): void {
  a.ewma = a.ewma === 0 ? ms : a.ewma + LATENCY_EWMA_ALPHA * (ms - a.ewma);
}
