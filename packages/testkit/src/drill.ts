/**
 * Pieces of a failover drill against running Gatehouse processes: requests through data planes, admin writes through
 * control planes (each acknowledged write remembered), and a watch on every data plane's config version.
 */

async function pause(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Requests to each URL in turn, one at a time; every answer other than `expectStatus` (or no answer) is a failure. */
export class ServeLoad {
  ok = 0;
  readonly failures: string[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(urls: string[], expectStatus = 200, intervalMs = 20) {
    this.loop = (async () => {
      for (let i = 0; this.running; i++) {
        const url = urls[i % urls.length]!;
        try {
          const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
          await res.arrayBuffer();
          if (res.status === expectStatus) this.ok++;
          else this.failures.push(`${url} → ${res.status}`);
        } catch (err) {
          this.failures.push(`${url} → ${err instanceof Error ? err.message : String(err)}`);
        }
        await pause(intervalMs);
      }
    })();
  }

  async stop(): Promise<{ ok: number; failures: string[] }> {
    this.running = false;
    await this.loop;
    return { ok: this.ok, failures: this.failures };
  }
}

/**
 * Creates routes `/<tag>-<n>` on `service` through the admin URLs in turn (one request at a time); a 201 is an
 * acknowledged write, anything else (a refused connection, a 5xx) is not and is only counted.
 */
export class AdminWriter {
  readonly acknowledged: string[] = [];
  unacknowledged = 0;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(adminUrls: () => string[], service: string, tag: string, intervalMs = 50) {
    this.loop = (async () => {
      for (let n = 0; this.running; n++) {
        const urls = adminUrls();
        const path = `/${tag}-${n}`;
        try {
          const res = await fetch(`${urls[n % urls.length]}/services/${service}/routes`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: `${tag}-${n}`, paths: [path] }),
            signal: AbortSignal.timeout(10_000),
          });
          await res.arrayBuffer();
          if (res.status === 201) this.acknowledged.push(path);
          else this.unacknowledged++;
        } catch {
          this.unacknowledged++;
        }
        await pause(intervalMs);
      }
    })();
  }

  async stop(): Promise<{ acknowledged: string[]; unacknowledged: number }> {
    this.running = false;
    await this.loop;
    return { acknowledged: this.acknowledged, unacknowledged: this.unacknowledged };
  }
}

/** Polls each data plane's `/status` and remembers any step back to an older config version. */
export class VersionWatch {
  readonly regressions: string[] = [];
  readonly latest = new Map<string, number>();
  private running = true;
  private readonly loop: Promise<void>;

  constructor(statusUrls: string[], intervalMs = 50) {
    this.loop = (async () => {
      while (this.running) {
        for (const url of statusUrls) {
          try {
            const status = (await (await fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) })).json()) as { config_version: number | null };
            const before = this.latest.get(url);
            const now = status.config_version;
            if (now === null) continue;
            if (before !== undefined && now < before) this.regressions.push(`${url}: ${before} → ${now}`);
            this.latest.set(url, Math.max(now, before ?? now));
          } catch {}
        }
        await pause(intervalMs);
      }
    })();
  }

  async stop(): Promise<string[]> {
    this.running = false;
    await this.loop;
    return this.regressions;
  }
}

async function routes(target: string): Promise<boolean> {
  const res = await fetch(target).catch(() => null);
  if (res) await res.arrayBuffer();
  return res?.status === 200;
}

/** The acknowledged paths some data plane does not route (answers other than 200), as `proxy path` strings. */
export async function missingRoutes(proxyUrls: string[], paths: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const proxy of proxyUrls) for (const path of paths) if (!(await routes(`${proxy}${path}`))) missing.push(`${proxy}${path}`);
  return missing;
}

/**
 * Polls until every data plane routes every path (only the ones still missing are asked again); returns the seconds
 * it took, or throws with what was still missing.
 */
export async function convergence(proxyUrls: string[], paths: string[], timeoutMs: number): Promise<number> {
  const started = Date.now();
  let missing = proxyUrls.flatMap((proxy) => paths.map((path) => `${proxy}${path}`));
  while (Date.now() - started < timeoutMs) {
    const still: string[] = [];
    for (const target of missing) if (!(await routes(target))) still.push(target);
    missing = still;
    if (missing.length === 0) return (Date.now() - started) / 1000;
    await pause(100);
  }
  throw new Error(`not converged within ${timeoutMs} ms: ${missing.length} acknowledged routes missing (${missing.slice(0, 5).join('; ')})`);
}
