// A full configuration load leaves garbage behind: the decoded payload, the parsed snapshot rows that compiling copied,
// the configuration it replaced. V8 collects it only once the heap next needs room, and keeps the pages it grew to in
// the meantime; a data plane that loads a large snapshot and then serves keyed requests (which allocate little that
// survives) would hold that memory for good. At 100,000 consumers that was about 90 MiB of its resident size. One full
// collection shortly after the load gives it back, at the cost of one pause of the order of a collection of the
// configuration (tens of milliseconds at that size), once per full load, which is rare: startup, a version gap, a
// declarative import.
import type { SnapshotDelta } from '@gatehouse/core';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** after the last full load, this long (ms) before the collection: loads in quick succession cost one */
export const RECLAIM_DELAY_MS = 1000;
/**
 * rows changed by deltas that count as a full load: a bulk import through the admin API arrives as thousands of small
 * deltas, whose garbage is the same as a full load's
 */
export const RECLAIM_AFTER_DELTA_ROWS = 10_000;

let collector: (() => void) | null | undefined;

/** V8's full collection, exposed for this process (as if started with --expose-gc); null where it cannot be */
function fullCollection(): (() => void) | null {
  if (collector !== undefined) return collector;
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return (collector = exposed);
  try {
    setFlagsFromString('--expose-gc');
    const fn = runInNewContext('gc') as unknown;
    collector = typeof fn === 'function' ? (fn as () => void) : null;
  } catch {
    collector = null;
  }
  return collector;
}

/**
 * Runs a full collection once loads have paused for `delayMs`. `collect` is V8's by default; the returned object
 * says whether one is pending and can cancel it (a process shutting down).
 */
export class LoadReclaimer {
  private timer: NodeJS.Timeout | null = null;
  /** rows changed by deltas since the last collection was scheduled */
  private deltaRows = 0;
  /** how many collections ran */
  ran = 0;

  constructor(
    private readonly delayMs = RECLAIM_DELAY_MS,
    private readonly collect: () => (() => void) | null = fullCollection,
    private readonly afterDeltaRows = RECLAIM_AFTER_DELTA_ROWS,
  ) {}

  get pending(): boolean {
    return this.timer !== null;
  }

  /** a delta was applied: past a full load's worth of changed rows, collect once deltas pause */
  deltaApplied(delta: Pick<SnapshotDelta, 'changes'>): void {
    for (const section of Object.values(delta.changes)) this.deltaRows += section.upsert.length + section.delete.length;
    if (this.deltaRows >= this.afterDeltaRows || this.timer !== null) this.loaded();
  }

  /** a full configuration was loaded: collect once loading pauses */
  loaded(): void {
    this.deltaRows = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      const gc = this.collect();
      if (gc === null) return;
      gc();
      this.ran++;
    }, this.delayMs);
    this.timer.unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
