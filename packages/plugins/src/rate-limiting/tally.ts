import type { RateLimitPeriod } from './schema';
import type { CountingWindow } from './windows';

/** One configured limit and the window it counts in for the current request. */
export interface PeriodLimit {
  period: RateLimitPeriod;
  limit: number;
  window: CountingWindow;
}

/**
 * What a counter store answers for one request: `blocked` when some period had already reached its limit (nothing
 * was counted), else every period was counted once. `counts[i]` is the count of `limits[i]` after that.
 */
export interface Tally {
  blocked: boolean;
  counts: number[];
}
