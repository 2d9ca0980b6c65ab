/** What one probe or one proxied exchange says about an address. */
export type Observation = 'success' | 'http_failure' | 'tcp_failure' | 'timeout';

export interface Thresholds {
  successes: number;
  http_failures: number;
  tcp_failures: number;
  timeouts: number;
}

/**
 * The health of one address, Kong's counters: a success counts toward healthy and clears the failure counters, a
 * failure counts toward unhealthy and clears the successes; reaching a threshold (0 = never) flips the state.
 * Active and passive checks share the counters, each with its own thresholds. A manual change resets them.
 */
export class AddressHealth {
  healthy = true;
  private successes = 0;
  private httpFailures = 0;
  private tcpFailures = 0;
  private timeouts = 0;

  /** true when the state changed */
  record(observation: Observation, limits: Thresholds): boolean {
    if (observation === 'success') {
      this.httpFailures = this.tcpFailures = this.timeouts = 0;
      this.successes++;
      if (!this.healthy && limits.successes > 0 && this.successes >= limits.successes) return this.set(true);
      return false;
    }
    this.successes = 0;
    let count: number;
    let limit: number;
    if (observation === 'http_failure') {
      count = ++this.httpFailures;
      limit = limits.http_failures;
    } else if (observation === 'tcp_failure') {
      count = ++this.tcpFailures;
      limit = limits.tcp_failures;
    } else {
      count = ++this.timeouts;
      limit = limits.timeouts;
    }
    if (this.healthy && limit > 0 && count >= limit) return this.set(false);
    return false;
  }

  /** sets the state (manual change or threshold reached); true when it changed */
  set(healthy: boolean): boolean {
    this.successes = this.httpFailures = this.tcpFailures = this.timeouts = 0;
    const changed = this.healthy !== healthy;
    this.healthy = healthy;
    return changed;
  }
}

/** Classifies an HTTP status by a check's lists: null when it is in neither. */
export function classifyStatus(status: number, healthy: readonly number[], unhealthy: readonly number[]): Observation | null {
  if (healthy.includes(status)) return 'success';
  if (unhealthy.includes(status)) return 'http_failure';
  return null;
}
