import type { CallBatch, CallReply, ReplyBatch, SharedCall } from './messages';

/**
 * Calls from a proxy worker to the node's shared stores in the primary. The calls made during one turn of the
 * worker's event loop leave as one IPC message (flushed by `setImmediate`, after the poll phase that read the
 * requests), and the primary answers a batch with one message: under load the IPC cost is paid per batch, not per
 * request. Only requests whose plugins use node state pay it (rate-limiting `local`, proxy-cache `memory`, oauth2's
 * embedded store); key-auth and the other credential checks read the worker's own compiled config.
 */
export class SharedCallClient {
  private nextId = 1;
  private queue: SharedCall[] = [];
  private flushScheduled = false;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private closedReason: string | null = null;

  constructor(private readonly send: (batch: CallBatch) => void) {}

  call<T>(service: string, method: string, args: unknown[]): Promise<T> {
    if (this.closedReason !== null) return Promise.reject(new Error(this.closedReason));
    const id = this.nextId++;
    this.queue.push({ id, service, method, args });
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return new Promise<T>((resolve, reject) => this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject }));
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.queue.length === 0) return;
    const calls = this.queue;
    this.queue = [];
    try {
      this.send({ gatehouse: 'calls', calls });
    } catch (err) {
      const message = `the primary cannot be reached: ${err instanceof Error ? err.message : String(err)}`;
      for (const call of calls) this.settle({ id: call.id, ok: false, value: message });
    }
  }

  /** The primary's answers. */
  receive(batch: ReplyBatch): void {
    for (const reply of batch.replies) this.settle(reply);
  }

  private settle(reply: CallReply): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(new Error(String(reply.value)));
  }

  /** The channel to the primary is gone: every call waiting, and every later one, fails. */
  close(reason = 'the primary is gone'): void {
    this.closedReason = reason;
    for (const [id] of this.pending) this.settle({ id, ok: false, value: reason });
  }

  /** calls sent and not yet answered */
  get waiting(): number {
    return this.pending.size;
  }
}

/** A shared store the primary serves: its object and the methods workers may call on it. */
export interface SharedService {
  target: object;
  methods: readonly string[];
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * The primary's side: runs each call of a batch on the named service. Synchronous answers (the rate-limit counters)
 * go back in one message at once; asynchronous ones (a token store) are gathered and sent when they settle.
 */
export class SharedCallServer {
  private readonly services = new Map<string, SharedService>();

  register(name: string, service: SharedService): void {
    this.services.set(name, service);
  }

  handle(batch: CallBatch, reply: (batch: ReplyBatch) => void): void {
    const ready: CallReply[] = [];
    let later: Array<Promise<CallReply>> | null = null;
    for (const call of batch.calls) {
      const answer = this.run(call);
      if (isThenable(answer)) (later ??= []).push(Promise.resolve(answer));
      else ready.push(answer);
    }
    if (ready.length > 0) reply({ gatehouse: 'replies', replies: ready });
    if (later !== null) void Promise.all(later).then((replies) => reply({ gatehouse: 'replies', replies }));
  }

  private run(call: SharedCall): CallReply | PromiseLike<CallReply> {
    const service = this.services.get(call.service);
    if (service === undefined || !service.methods.includes(call.method)) return { id: call.id, ok: false, value: `no shared ${call.service}.${call.method}` };
    try {
      const method = (service.target as Record<string, (...args: unknown[]) => unknown>)[call.method]!;
      const value = method.apply(service.target, call.args);
      if (!isThenable(value)) return { id: call.id, ok: true, value };
      return Promise.resolve(value).then(
        (settled) => ({ id: call.id, ok: true, value: settled }),
        (err: unknown) => ({ id: call.id, ok: false, value: err instanceof Error ? err.message : String(err) }),
      );
    } catch (err) {
      return { id: call.id, ok: false, value: err instanceof Error ? err.message : String(err) };
    }
  }
}
