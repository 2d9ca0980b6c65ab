import type { ManualHealthCommand, TargetHealth, TargetHealthReport, UpstreamHealthReport } from '@gatehouse/sync';
import { ActiveHealthChecker } from './active-checker';
import { Address, UpstreamBalancer, type TargetState } from './balancer';
import { DNS_ERROR_RETRY_SECONDS, SystemResolver, type HostResolver } from './dns';
import type { Observation } from './health';
import type { Prober } from './probe';
import type { UpstreamSpec } from './spec';

export interface BalancerRegistryOptions {
  /** DNS for targets given by name; the system's by default */
  resolver?: HostResolver;
  /** the active checker's tick (ms) */
  checkTickMs?: number;
  prober?: Prober;
  /** how often expired DNS answers are looked for (ms) */
  dnsTickMs?: number;
  now?: () => number;
  /** false in a proxy worker: its primary runs the node's active checks (default true) */
  activeChecks?: boolean;
  /**
   * where passive observations go instead of this registry's counters: a proxy worker sends them to its primary,
   * which counts them for the node and sends the resulting health back (`mirrorHealth`)
   */
  passiveSink?: (upstreamId: string, addressKey: string, observation: Observation) => void;
}

/** One address's health as the node sees it: [upstream id, address key, healthy]. */
export type AddressHealthState = [string, string, boolean];

/**
 * The balancers of the served configuration, kept across snapshots: an upstream that stays keeps its targets' DNS
 * answers, health and load. Owns the one active-check timer and the one DNS refresh timer, takes passive
 * observations and manual health commands, and says when any health changed.
 */
export class BalancerRegistry {
  private byName = new Map<string, UpstreamBalancer>();
  private byId = new Map<string, UpstreamBalancer>();
  private specs: ReadonlyMap<string, UpstreamSpec> | null = null;
  private readonly listeners = new Set<() => void>();
  private readonly resolver: HostResolver;
  private readonly now: () => number;
  private readonly dnsTimer: NodeJS.Timeout;
  readonly checker: ActiveHealthChecker;
  private closed = false;
  private readonly passiveSink: BalancerRegistryOptions['passiveSink'] | null;
  /** the node's health by address key, from the primary; applied to addresses as they appear */
  private mirrored: Map<string, boolean> | null = null;

  constructor(options: BalancerRegistryOptions = {}) {
    this.resolver = options.resolver ?? new SystemResolver();
    this.now = options.now ?? Date.now;
    this.checker = new ActiveHealthChecker({
      tickMs: options.checkTickMs,
      prober: options.prober,
      now: this.now,
      onChange: () => this.changed(),
    });
    if (options.activeChecks === false) this.checker.close();
    this.passiveSink = options.passiveSink ?? null;
    this.dnsTimer = setInterval(() => this.refreshDns(), options.dnsTickMs ?? 250);
    this.dnsTimer.unref();
  }

  get(name: string): UpstreamBalancer | undefined {
    return this.byName.get(name);
  }

  getById(id: string): UpstreamBalancer | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<UpstreamBalancer> {
    return this.byId.values();
  }

  /** Called after any health change (checks, passive, manual, DNS). Returns an unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Takes the upstreams of a newly served snapshot. */
  update(specs: ReadonlyMap<string, UpstreamSpec>): void {
    if (specs === this.specs || this.closed) return;
    this.specs = specs;
    const byName = new Map<string, UpstreamBalancer>();
    const byId = new Map<string, UpstreamBalancer>();
    for (const spec of specs.values()) {
      const previous = this.byId.get(spec.id);
      let balancer: UpstreamBalancer;
      if (previous === undefined) {
        balancer = new UpstreamBalancer(spec);
        for (const a of balancer.addresses) this.checker.schedule(balancer, a, true);
      } else {
        const before = new Set(previous.addresses);
        const fingerprint = previous.spec.fingerprint;
        previous.adopt(spec);
        balancer = previous;
        const after = new Set(balancer.addresses);
        for (const a of before) if (!after.has(a)) this.checker.forget(a);
        for (const a of after) if (!before.has(a) || fingerprint !== spec.fingerprint) this.checker.schedule(balancer, a, true);
      }
      byName.set(spec.name, balancer);
      byId.set(spec.id, balancer);
      for (const target of balancer.targets) if (target.needsDns && target.expiresAt === 0 && target.resolving === null) this.resolve(balancer, target);
    }
    for (const [id, old] of this.byId) if (!byId.has(id)) for (const a of old.addresses) this.checker.forget(a);
    this.byName = byName;
    this.byId = byId;
    this.applyMirror();
    this.changed();
  }

  private resolve(balancer: UpstreamBalancer, target: TargetState): void {
    const host = target.spec.host;
    target.resolving = this.resolver.resolve(host).then(
      (answers) => {
        const previous = new Map(target.addresses.map((a) => [`${a.key}|${a.srvWeight}`, a]));
        target.addresses = answers.map((r) => {
          const port = r.srv?.port ?? target.spec.port;
          const srvWeight = r.srv?.weight ?? null;
          return previous.get(`${new Address(r.address, port, target).key}|${srvWeight}`) ?? new Address(r.address, port, target, srvWeight);
        });
        target.dnsError = answers.length === 0;
        const ttl = answers.reduce((min, r) => Math.min(min, r.ttl), Infinity);
        target.expiresAt = this.now() + Math.max(1, Number.isFinite(ttl) ? ttl : DNS_ERROR_RETRY_SECONDS) * 1000;
      },
      () => {
        target.addresses = [];
        target.dnsError = true;
        target.expiresAt = this.now() + DNS_ERROR_RETRY_SECONDS * 1000;
      },
    );
    void target.resolving.then(() => {
      target.resolving = null;
      if (this.closed || this.byId.get(balancer.spec.id) !== balancer) return;
      const before = new Set(balancer.addresses);
      balancer.rebuild();
      const after = new Set(balancer.addresses);
      for (const a of before) if (!after.has(a)) this.checker.forget(a);
      for (const a of after) if (!before.has(a)) this.checker.schedule(balancer, a, true);
      this.applyMirror();
      this.changed();
    });
  }

  private refreshDns(): void {
    const now = this.now();
    for (const balancer of this.byId.values()) {
      for (const target of balancer.targets) {
        if (target.needsDns && target.resolving === null && target.expiresAt !== 0 && now >= target.expiresAt) this.resolve(balancer, target);
      }
    }
  }

  /** What a proxied exchange said about an address (circuit breaking). */
  passive(balancer: UpstreamBalancer, address: Address, observation: Observation): void {
    if (this.passiveSink) return this.passiveSink(balancer.spec.id, address.key, observation);
    const { healthy, unhealthy } = balancer.spec.healthchecks.passive;
    const changed = address.health.record(observation, {
      successes: healthy.successes,
      http_failures: unhealthy.http_failures,
      tcp_failures: unhealthy.tcp_failures,
      timeouts: unhealthy.timeouts,
    });
    if (changed) {
      this.checker.schedule(balancer, address, true);
      this.changed();
    }
  }

  /** `PUT …/healthy|unhealthy` as heard from the control plane; false when this node has no such target. */
  applyManual(command: ManualHealthCommand): boolean {
    const balancer = this.byId.get(command.upstream_id);
    const target = balancer?.targets.find((t) => t.spec.target === command.target);
    if (!balancer || !target) return false;
    let changed = false;
    for (const a of target.addresses) {
      if (command.address !== undefined && a.key !== command.address) continue;
      if (a.health.set(command.healthy)) {
        changed = true;
        this.checker.schedule(balancer, a);
      }
    }
    if (changed) this.changed();
    return true;
  }

  /** Every address's health, for proxy workers to mirror. */
  healthStates(): AddressHealthState[] {
    const out: AddressHealthState[] = [];
    for (const balancer of this.byId.values()) for (const a of balancer.addresses) out.push([balancer.spec.id, a.key, a.health.healthy]);
    return out;
  }

  /** Takes the node's health from the primary (a proxy worker); addresses this process has not resolved yet get it later. */
  mirrorHealth(states: readonly AddressHealthState[]): void {
    this.mirrored = new Map(states.map(([upstreamId, key, healthy]) => [`${upstreamId} ${key}`, healthy]));
    this.applyMirror();
  }

  private applyMirror(): void {
    const mirrored = this.mirrored;
    if (mirrored === null) return;
    let changed = false;
    for (const balancer of this.byId.values()) {
      for (const a of balancer.addresses) {
        const healthy = mirrored.get(`${balancer.spec.id} ${a.key}`);
        if (healthy !== undefined && a.health.healthy !== healthy) changed = a.health.set(healthy) || changed;
      }
    }
    if (changed) this.changed();
  }

  /** Every upstream's health as this node sees it, in the shape data planes report. */
  healthReport(): Record<string, UpstreamHealthReport> {
    const out: Record<string, UpstreamHealthReport> = {};
    for (const balancer of this.byId.values()) out[balancer.spec.id] = upstreamHealth(balancer);
    return out;
  }

  /** Every target address with its state, as `kong_upstream_target_health` lists them (read at scrape time). */
  *targetStates(): Iterable<TargetHealthMetric> {
    for (const balancer of this.byId.values()) {
      for (const target of balancer.targets) {
        const report = targetHealth(balancer, target);
        if (target.dnsError || report.addresses.length === 0) {
          yield { upstream: balancer.spec.name, target: report.target, address: '', state: metricState(report.health) };
          continue;
        }
        for (const a of report.addresses) {
          yield { upstream: balancer.spec.name, target: report.target, address: `${a.ip}:${a.port}`, state: metricState(a.health) };
        }
      }
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.dnsTimer);
    this.checker.close();
    this.listeners.clear();
  }
}

function addressHealth(checksOn: boolean, a: Address): TargetHealth {
  if (!a.health.healthy) return 'UNHEALTHY';
  return checksOn ? 'HEALTHY' : 'HEALTHCHECKS_OFF';
}

function targetHealth(balancer: UpstreamBalancer, target: TargetState): TargetHealthReport {
  const checksOn = balancer.spec.checksEnabled;
  const addresses = target.addresses.map((a) => ({ ip: a.ip, port: a.port, health: addressHealth(checksOn, a), weight: a.weight }));
  let health: TargetHealth;
  if (target.dnsError) health = 'DNS_ERROR';
  else if (target.addresses.length > 0 && target.addresses.every((a) => !a.health.healthy)) health = 'UNHEALTHY';
  else health = checksOn ? 'HEALTHY' : 'HEALTHCHECKS_OFF';
  return { target: target.spec.target, health, addresses };
}

function upstreamHealth(balancer: UpstreamBalancer): UpstreamHealthReport {
  const targets = balancer.targets.map((t) => targetHealth(balancer, t));
  if (!balancer.spec.checksEnabled) return { health: 'HEALTHCHECKS_OFF', targets };
  const available = balancer.pickable();
  return { health: available ? 'HEALTHY' : 'UNHEALTHY', targets };
}

/** one target address for `kong_upstream_target_health` */
export interface TargetHealthMetric {
  upstream: string;
  target: string;
  address: string;
  state: 'healthchecks_off' | 'healthy' | 'unhealthy' | 'dns_error';
}

const METRIC_STATES: Record<TargetHealth, TargetHealthMetric['state']> = {
  HEALTHY: 'healthy',
  UNHEALTHY: 'unhealthy',
  HEALTHCHECKS_OFF: 'healthchecks_off',
  DNS_ERROR: 'dns_error',
};

function metricState(health: TargetHealth): TargetHealthMetric['state'] {
  return METRIC_STATES[health];
}
