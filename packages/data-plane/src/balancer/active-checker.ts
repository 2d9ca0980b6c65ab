import type { Address, UpstreamBalancer } from './balancer';
import { MinHeap } from './min-heap';
import { httpProbe, type Prober } from './probe';

interface CheckEntry {
  due: number;
  address: Address;
  balancer: UpstreamBalancer;
  generation: number;
}

export interface ActiveCheckerOptions {
  /** how often the one timer looks for due checks (ms) */
  tickMs?: number;
  prober?: Prober;
  now?: () => number;
  /** called when a check changed an address's state */
  onChange: (balancer: UpstreamBalancer, address: Address) => void;
}

/**
 * Active health checks for every address of every upstream on one timer: due checks sit in a min-heap and each tick
 * starts those that are due, at most `concurrency` at once per upstream. Probes are plain async I/O; nothing waits
 * on them, so proxying never does.
 */
export class ActiveHealthChecker {
  private readonly heap = new MinHeap<CheckEntry>();
  private readonly inFlight = new Map<UpstreamBalancer, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly tickMs: number;
  private readonly prober: Prober;
  private readonly now: () => number;
  private closed = false;
  /** probes run since start (a figure for tests and status) */
  probes = 0;

  constructor(private readonly options: ActiveCheckerOptions) {
    this.tickMs = options.tickMs ?? 100;
    this.prober = options.prober ?? httpProbe;
    this.now = options.now ?? Date.now;
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
  }

  /** the interval (s) that applies to the address in its current state; 0 = not checked in this state */
  private intervalFor(balancer: UpstreamBalancer, address: Address): number {
    const spec = balancer.spec;
    return address.health.healthy ? spec.activeHealthyInterval : spec.activeUnhealthyInterval;
  }

  /** (Re)schedules an address after it joined, changed state or its upstream changed; drops earlier entries. */
  schedule(balancer: UpstreamBalancer, address: Address, soon = false): void {
    const generation = ++address.checkGeneration;
    if (this.closed) return;
    const interval = this.intervalFor(balancer, address);
    if (interval <= 0) return;
    // a newcomer is checked within one tick; afterwards once per interval
    const due = this.now() + (soon ? 0 : interval * 1000);
    this.heap.push({ due, address, balancer, generation });
  }

  /** Stops checking an address (it left its upstream). */
  forget(address: Address): void {
    address.checkGeneration++;
  }

  private tick(): void {
    const now = this.now();
    const deferred: CheckEntry[] = [];
    for (let top = this.heap.peek(); top !== undefined && top.due <= now; top = this.heap.peek()) {
      const entry = this.heap.pop()!;
      if (entry.generation !== entry.address.checkGeneration) continue;
      const running = this.inFlight.get(entry.balancer) ?? 0;
      if (running >= entry.balancer.spec.healthchecks.active.concurrency) {
        deferred.push({ ...entry, due: now + this.tickMs });
        continue;
      }
      this.run(entry, running);
    }
    for (const entry of deferred) this.heap.push(entry);
  }

  private run(entry: CheckEntry, running: number): void {
    const { balancer, address } = entry;
    this.inFlight.set(balancer, running + 1);
    this.probes++;
    this.prober(address, balancer.spec)
      .catch(() => 'tcp_failure' as const)
      .then((observation) => {
        const left = (this.inFlight.get(balancer) ?? 1) - 1;
        if (left <= 0) this.inFlight.delete(balancer);
        else this.inFlight.set(balancer, left);
        if (this.closed || entry.generation !== address.checkGeneration) return;
        const { healthy, unhealthy } = balancer.spec.healthchecks.active;
        const changed =
          observation !== null &&
          address.health.record(observation, {
            successes: healthy.successes,
            http_failures: unhealthy.http_failures,
            tcp_failures: unhealthy.tcp_failures,
            timeouts: unhealthy.timeouts,
          });
        this.schedule(balancer, address);
        if (changed) this.options.onChange(balancer, address);
      });
  }

  get scheduled(): number {
    return this.heap.size;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.heap.clear();
  }
}
