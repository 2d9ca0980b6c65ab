/** Kong's target states in `kong_upstream_target_health`. */
export type TargetHealthState = 'healthchecks_off' | 'healthy' | 'unhealthy' | 'dns_error';
export const TARGET_HEALTH_STATES: readonly TargetHealthState[] = ['healthchecks_off', 'healthy', 'unhealthy', 'dns_error'];

/** One target address as the balancer sees it. */
export interface TargetHealthReport {
  /** the upstream's name */
  upstream: string;
  /** the target as configured (`host:port`) */
  target: string;
  /** the resolved address (`ip:port`; '' when it did not resolve) */
  address: string;
  state: TargetHealthState;
}

/**
 * Where the balancer tells `/metrics` about target health. It registers a function that lists its targets; the
 * function is called at scrape time only, so health changes cost nothing until someone scrapes.
 *
 *   const unregister = metrics.upstreamHealth.register(() => balancer.targets().map(t => ({ upstream, target, address, state })));
 *
 * `kong_upstream_target_health{upstream,target,address,state,subsystem}` is exported (one series per state, 1 for the
 * current one, as Kong does) while some enabled `prometheus` configuration has `upstream_health_metrics`.
 */
export class UpstreamHealthRegistry {
  private readonly sources = new Set<() => Iterable<TargetHealthReport>>();

  register(source: () => Iterable<TargetHealthReport>): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }

  *reports(): Iterable<TargetHealthReport> {
    for (const source of this.sources) yield* source();
  }
}
