/** A connection that keeps a write back until the event loop has handled every socket that was ready. */
export interface DeferredWriter {
  /** writes what was kept back, if anything still is (a no-op otherwise) */
  flushDeferred(): void;
}

const waiting: DeferredWriter[] = [];
let scheduled = false;

function flushWaiting(): void {
  scheduled = false;
  // a writer deferred while this runs waits for the next turn
  const count = waiting.length;
  for (let i = 0; i < count; i++) waiting[i]!.flushDeferred();
  waiting.splice(0, count);
}

/**
 * Schedules `writer`'s kept-back write for the end of the event loop's I/O phase (a `setImmediate`, which runs once
 * every ready socket of this turn has been read). Under load one turn serves many requests; their writes then go out
 * back to back instead of one between each request's work. A write to a peer that waits for data wakes it, and waking
 * a process on another core is costly (in a virtual machine above all); a peer already woken by the first write of a
 * burst takes the rest without a wake-up each. With one request in a turn, its write waits only for that turn's end.
 *
 * A writer keeps its own bytes and flushes them itself before any other write, end or hand-over of its socket, so
 * the order of its writes never changes.
 */
export function deferToIoEnd(writer: DeferredWriter): void {
  waiting.push(writer);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushWaiting);
  }
}
