import { isDatabaseUnreachable } from '../db/unreachable';
import type { PublicationRecord } from './publication-record';

/**
 * A failed publication, reported (status, logs, metrics) and retried with backoff: 250 ms, doubling up to 2 s, back to
 * 250 ms after each publication. One retry waits at a time.
 */
export class PublicationRetry {
  private timer: NodeJS.Timeout | null = null;
  private delayMs = 250;
  private stopped = false;

  constructor(
    private readonly record: PublicationRecord,
    private readonly publish: () => void,
    private readonly onFailed?: (message: string) => void,
  ) {}

  /** a retry is waiting */
  get waiting(): boolean {
    return this.timer !== null;
  }

  /** reports a failure; with `retry`, publishes again after the backoff */
  failed(message: string, err: unknown, retry: boolean): void {
    this.record.failed(message, err instanceof Error ? err.message : String(err));
    this.onFailed?.(message);
    if (!retry || this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.publish();
    }, this.delayMs);
    this.timer.unref();
    this.delayMs = Math.min(this.delayMs * 2, 2000);
  }

  /** reports a configuration that could not be read from the database (unreachable, or a failing query) */
  readFailed(err: unknown): void {
    if (isDatabaseUnreachable(err)) {
      this.record.databaseReachable(false, err);
      this.failed('snapshot not published: the database is unreachable; publishing as soon as it is back', err, true);
    } else {
      this.failed('snapshot not published: the configuration cannot be read from the database', err, true);
    }
  }

  /** a publication went through: the next failure is retried soon */
  published(): void {
    this.delayMs = 250;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
