/**
 * The data plane's fetches of the latest snapshot: concurrent asks share one fetch, plus one more after it; a failed
 * fetch is tried again with backoff, so convergence after an outage does not hang on one reconnect notice or wait for
 * the periodic check.
 */
export class FetchLoop {
  /** failed fetches in a row */
  failures = 0;
  private fetching: Promise<void> | null = null;
  private again = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly fetch: () => Promise<void>,
    private readonly retry: { firstMs: number; maxMs: number },
    /** retries are scheduled once started and until stopped; a fetch asked for during one runs after it until stopped */
    private readonly phase: () => { started: boolean; stopped: boolean },
  ) {}

  now(): Promise<void> {
    if (this.fetching) {
      this.again = true;
      return this.fetching;
    }
    this.fetching = (async () => {
      try {
        do {
          this.again = false;
          await this.fetch();
        } while (this.again && !this.phase().stopped);
      } finally {
        this.fetching = null;
      }
    })();
    return this.fetching;
  }

  /** a fetch failed: counted, and tried again later */
  failed(): void {
    this.failures++;
    const first = this.retry.firstMs;
    const { started, stopped } = this.phase();
    if (first <= 0 || stopped || !started || this.retryTimer) return;
    const delay = Math.min(first * 2 ** Math.min(this.failures - 1, 16), this.retry.maxMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.now();
    }, delay);
    this.retryTimer.unref();
  }

  /** Stops retrying; resolves once a fetch under way is over. */
  async stop(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.fetching?.catch(() => {});
  }
}
