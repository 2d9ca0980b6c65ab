import type { RateLimitPeriod } from './schema';
import type { PeriodLimit, Tally } from './tally';

interface WindowCounts {
  start: number;
  end: number;
  counts: Map<string, number>;
}

/**
 * Counters of the `local` policy, in this process. All counters of one period live in one map for the current
 * window; when the window is over the map is replaced as a whole, so expired counters cost nothing to sweep and every
 * request is a few map operations.
 */
export class LocalCounters {
  private readonly periods = new Map<RateLimitPeriod, WindowCounts>();

  private countsFor(limit: PeriodLimit): Map<string, number> {
    const { start, end } = limit.window;
    let current = this.periods.get(limit.period);
    if (current === undefined || current.start !== start) {
      current = { start, end, counts: new Map() };
      this.periods.set(limit.period, current);
    }
    return current.counts;
  }

  /** Counts one request under `key` in every period, unless one of them is already at its limit. */
  take(key: string, limits: readonly PeriodLimit[]): Tally {
    const counts: number[] = new Array(limits.length);
    let blocked = false;
    for (let i = 0; i < limits.length; i++) {
      const count = this.countsFor(limits[i]!).get(key) ?? 0;
      counts[i] = count;
      if (count >= limits[i]!.limit) blocked = true;
    }
    if (blocked) return { blocked, counts };
    for (let i = 0; i < limits.length; i++) {
      const next = counts[i]! + 1;
      this.countsFor(limits[i]!).set(key, next);
      counts[i] = next;
    }
    return { blocked, counts };
  }

  /** The counts under `key` in every period's current window, counting nothing. */
  peek(key: string, limits: readonly PeriodLimit[]): number[] {
    return limits.map((limit) => this.countsFor(limit).get(key) ?? 0);
  }

  /** Adds `amount` under `key` in every period (response-ratelimiting counts what the upstream declared). */
  add(key: string, limits: readonly PeriodLimit[], amount: number): void {
    for (const limit of limits) {
      const counts = this.countsFor(limit);
      counts.set(key, (counts.get(key) ?? 0) + amount);
    }
  }

  /** counters currently held (all periods) */
  get size(): number {
    let size = 0;
    for (const { counts } of this.periods.values()) size += counts.size;
    return size;
  }
}
