/**
 * Long declarative work (a document of 100,000 entities) runs in slices, so the control plane keeps answering
 * `/status` and other admin requests meanwhile (decision 26): a step function is a generator that yields now and then
 * (`SLICE` entities or `SLICE_MS` apart); `runInSlices` drains it and gives the event loop a turn at every yield, `runAtOnce` drains
 * it in one go (the offline CLI, tests).
 */
export const SLICE = 500;

export type Steps<T> = Generator<void, T, void>;

/** gives timers, sockets and other requests their turn */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function runAtOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

export async function runInSlices<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await nextTurn();
  }
}

/** ms of work after which a slice is full whatever its count (entities differ in size: one may carry 200 tags) */
export const SLICE_MS = 20;

/** counts work and says when a slice is full: `size` pieces of it, or SLICE_MS since the slice began */
export class SliceCounter {
  private count = 0;
  private began = performance.now();

  constructor(private readonly size = SLICE) {}

  full(): boolean {
    if (++this.count < this.size && performance.now() - this.began < SLICE_MS) return false;
    this.count = 0;
    this.began = performance.now();
    return true;
  }
}
