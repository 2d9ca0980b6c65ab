// Small helpers shared by the e2e tests: waiting on a condition, credentials, a steady request loop.
import { get as httpGet, request as httpRequest } from 'node:http';
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

/** A request with a chosen Host header (fetch does not allow setting it); the path is sent as written. */
export function withHost(url: string, host: string, method = 'GET'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
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
    if (this.agent.closed || this.agent.destroyed) this.agent = new Agent({ keepAliveTimeout: 1000 });
    this.running = true;
    this.loop = this.run();
  }

  /** stops sending (idempotent) */
  async pause(): Promise<void> {
    this.running = false;
    await this.loop;
    this.loop = null;
    if (!this.agent.closed && !this.agent.destroyed) await this.agent.close();
  }

  resume(): void {
    if (this.agent.closed || this.agent.destroyed) this.agent = new Agent({ keepAliveTimeout: 1000 });
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

/** Runs every cleanup step even when one fails, then reports the first failure. */
export async function cleanUp(...steps: Array<() => Promise<unknown> | unknown>): Promise<void> {
  let first: unknown = null;
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      first ??= err;
    }
  }
  if (first) throw first;
}

/**
 * Requests sent back to back on fresh connections while a process restarts: a refused connection is expected while
 * the port is closed, but every HTTP answer must be the expected one (no answer from a half-started process).
 */
export class RestartProbe {
  readonly answers: Record<string, number> = {};
  /** the first unexpected answers: ms since the probe started, status, the gateway's headers and the body */
  readonly samples: string[] = [];
  refused = 0;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(url: string, headers: Record<string, string>, private readonly expectStatus = 200) {
    const started = Date.now();
    this.loop = (async () => {
      while (this.running) {
        const status = await new Promise<number | null>((resolve) => {
          const req = httpGet(url, { headers, agent: false, timeout: 5000 }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (body += chunk));
            res.on('end', () => {
              if (res.statusCode !== this.expectStatus && this.samples.length < 5) {
                const gateway = Object.entries(res.headers).filter(([name]) => name.startsWith('x-kong') || name === 'server' || name === 'via');
                this.samples.push(`+${Date.now() - started} ms ${res.statusCode} ${JSON.stringify(Object.fromEntries(gateway))} ${body.slice(0, 200)}`);
              }
              resolve(res.statusCode ?? 0);
            });
            res.on('error', () => resolve(null));
          });
          req.on('error', () => resolve(null));
          req.on('timeout', () => req.destroy());
        });
        if (status === null) {
          this.refused++;
          await new Promise((r) => setTimeout(r, 2));
        } else {
          this.answers[status] = (this.answers[status] ?? 0) + 1;
        }
      }
    })();
  }

  /** answers other than the expected status, by status */
  async stop(): Promise<Record<string, number>> {
    this.running = false;
    await this.loop;
    return Object.fromEntries(Object.entries(this.answers).filter(([status]) => Number(status) !== this.expectStatus));
  }
}
