import type { RateLimitPeriod } from './schema';

/** One fixed counting window: [start, end) in epoch milliseconds. */
export interface CountingWindow {
  readonly start: number;
  readonly end: number;
}

const FIXED_LENGTH: Partial<Record<RateLimitPeriod, number>> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/**
 * The window `nowMs` falls in. Seconds, minutes, hours and days are aligned on the epoch (so on UTC, like Kong's
 * timestamps); months and years follow the UTC calendar.
 */
export function windowOf(period: RateLimitPeriod, nowMs: number): CountingWindow {
  const length = FIXED_LENGTH[period];
  if (length !== undefined) {
    const start = nowMs - (nowMs % length);
    return { start, end: start + length };
  }
  const date = new Date(nowMs);
  const year = date.getUTCFullYear();
  if (period === 'month') {
    const month = date.getUTCMonth();
    return { start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) };
  }
  return { start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) };
}

const latest = new Map<RateLimitPeriod, CountingWindow>();

/** windowOf, remembered until the window is over: most requests reuse the same object. */
export function currentWindow(period: RateLimitPeriod, nowMs: number): CountingWindow {
  const known = latest.get(period);
  if (known !== undefined && nowMs >= known.start && nowMs < known.end) return known;
  const next = windowOf(period, nowMs);
  latest.set(period, next);
  return next;
}

/** Whole seconds until the window ends, at least 1 (RateLimit-Reset and Retry-After). */
export function secondsToReset(window: CountingWindow, nowMs: number): number {
  return Math.max(1, Math.ceil((window.end - nowMs) / 1000));
}
