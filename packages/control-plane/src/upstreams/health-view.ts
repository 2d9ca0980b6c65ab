import type { Target, Upstream } from '@gatehouse/core';
import { parseHostPort } from '@gatehouse/core';
import type { AddressHealthReport, BalancerHealth, DataPlaneHealthReport, TargetHealth } from '@gatehouse/sync';

const RANK: Record<TargetHealth, number> = { HEALTHCHECKS_OFF: 0, HEALTHY: 1, UNHEALTHY: 2, DNS_ERROR: 3 };

export function worstHealth<T extends TargetHealth>(a: T, b: T): T {
  return RANK[b] > RANK[a] ? b : a;
}

/** Whether any check can change a target's health (Kong: active intervals, passive thresholds). */
export function healthchecksEnabled(upstream: Upstream): boolean {
  const { active, passive } = upstream.healthchecks;
  const activeOn = active.healthy.interval > 0 || active.unhealthy.interval > 0;
  const p = passive;
  const passiveOn = p.healthy.successes > 0 || p.unhealthy.http_failures > 0 || p.unhealthy.tcp_failures > 0 || p.unhealthy.timeouts > 0;
  return activeOn || passiveOn;
}

export interface DataPlaneTargetHealth {
  id: string;
  hostname: string;
  health: TargetHealth;
  addresses: AddressHealthReport[];
}

export interface TargetHealthView {
  health: TargetHealth;
  addresses: AddressHealthReport[];
  data_planes: DataPlaneTargetHealth[];
}

/** A target's health before any data plane reported it: what Kong shows for a freshly added target. */
function initialHealth(upstream: Upstream, target: Target): TargetHealthView {
  const health: TargetHealth = healthchecksEnabled(upstream) ? 'HEALTHY' : 'HEALTHCHECKS_OFF';
  const parsed = parseHostPort(target.target);
  const addresses = parsed && parsed.kind !== 'name' ? [{ ip: parsed.host, port: parsed.port ?? 8000, health, weight: target.weight }] : [];
  return { health, addresses, data_planes: [] };
}

/** Per target, the worst health any live data plane reports (per address too), with each data plane's own view. */
export function targetHealthView(upstream: Upstream, target: Target, reports: DataPlaneHealthReport[]): TargetHealthView {
  let view: TargetHealthView | null = null;
  for (const report of reports) {
    const seen = report.upstreams[upstream.id]?.targets.find((t) => t.target === target.target);
    if (!seen) continue;
    if (view === null) view = { health: seen.health, addresses: [], data_planes: [] };
    else view.health = worstHealth(view.health, seen.health);
    view.data_planes.push({ id: report.data_plane_id, hostname: report.hostname, health: seen.health, addresses: seen.addresses });
    for (const address of seen.addresses) {
      const known = view.addresses.find((a) => a.ip === address.ip && a.port === address.port);
      if (known) known.health = worstHealth(known.health, address.health);
      else view.addresses.push({ ...address });
    }
  }
  return view ?? initialHealth(upstream, target);
}

export interface BalancerHealthView {
  health: BalancerHealth;
  data_planes: Array<{ id: string; hostname: string; health: BalancerHealth }>;
}

/** The upstream's own health: the worst any live data plane reports; HEALTHY/HEALTHCHECKS_OFF before any report. */
export function balancerHealthView(upstream: Upstream, reports: DataPlaneHealthReport[]): BalancerHealthView {
  let health: BalancerHealth | null = null;
  const data_planes: BalancerHealthView['data_planes'] = [];
  for (const report of reports) {
    const seen = report.upstreams[upstream.id];
    if (!seen) continue;
    health = health === null ? seen.health : worstHealth(health, seen.health);
    data_planes.push({ id: report.data_plane_id, hostname: report.hostname, health: seen.health });
  }
  return { health: health ?? (healthchecksEnabled(upstream) ? 'HEALTHY' : 'HEALTHCHECKS_OFF'), data_planes };
}
