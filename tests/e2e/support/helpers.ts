// Small helpers shared by the e2e tests: waiting on a condition, credentials, a steady request loop.
import { Agent, fetch as undiciFetch } from 'undici';

/** Polls `check` until it returns true (errors count as "not yet"); fails with the last error after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000, everyMs = 50): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < until) {
    try {
      if (await check()) return;
      last = null;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** `Basic base64(user:password)` */
export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** GET a JSON document, failing on a non-2xx answer. */
export async function getJson(url: string): Promise<any> {
  const res = await fetch(url);
  const text = await res.text();
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

export interface LoadFailure {
  at: number;
  target: string;
  status?: number;
  error?: string;
}

/**
 * A steady stream of requests to one URL (one at a time, `intervalMs` apart), counting answers that are not the
 * expected status. `pause()` waits for the request in flight, so a process can be stopped without the loop seeing it;
 * `resume()` starts over on fresh connections.
 */
export class SteadyLoad {
  ok = 0;
  readonly failures: LoadFailure[] = [];
  private running = false;
  private loop: Promise<void> | null = null;
  private agent = new Agent({ keepAliveTimeout: 1000 });

  constructor(
    private readonly url: () => string,
    private readonly init: RequestInit = {},
    private readonly expectStatus = 200,
    private readonly intervalMs = 50,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async pause(): Promise<void> {
    this.running = false;
    await this.loop;
    this.loop = null;
    await this.agent.close();
  }

  resume(): void {
    this.agent = new Agent({ keepAliveTimeout: 1000 });
    this.start();
  }

  /** resolves once `count` more requests have succeeded */
  async moreSuccesses(count: number, timeoutMs = 20_000): Promise<void> {
    const target = this.ok + count;
    await waitUntil(`${count} more successful requests to ${this.url()}`, () => this.ok >= target, timeoutMs, 20);
  }

  async stop(): Promise<{ ok: number; failures: LoadFailure[] }> {
    await this.pause();
    return { ok: this.ok, failures: this.failures };
  }

  private async run(): Promise<void> {
    while (this.running) {
      const started = Date.now();
      const target = this.url();
      try {
        const res = await undiciFetch(target, { ...(this.init as object), dispatcher: this.agent, signal: AbortSignal.timeout(5000) });
        await res.arrayBuffer();
        if (res.status === this.expectStatus) this.ok++;
        else this.failures.push({ at: started, target, status: res.status });
      } catch (err) {
        this.failures.push({ at: started, target, error: err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? '')}` : String(err) });
      }
      const wait = this.intervalMs - (Date.now() - started);
      if (wait > 0 && this.running) await new Promise((r) => setTimeout(r, wait));
    }
  }
}
