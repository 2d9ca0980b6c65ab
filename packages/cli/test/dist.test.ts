import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePorts, spawnProcess, startEchoUpstream, type EchoUpstream, type SpawnedProcess } from '@gatehouse/testkit';

/**
 * The built artefact: `pnpm build` (scripts/build.mjs) compiles the CLI to packages/cli/dist/main.js, and
 * `node packages/cli/dist/main.js start` runs the whole gateway from it, without TypeScript tooling, proxying to an
 * upstream through a route created over its admin API.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN = join(ROOT, 'packages/cli/dist/main.js');

let dir: string;
let upstream: EchoUpstream;
let gateway: SpawnedProcess;
let admin: string;
let proxy: string;

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT });
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-dist-'));
  upstream = await startEchoUpstream();
  const [adminPort, proxyPort] = await freePorts(2);
  admin = `http://127.0.0.1:${adminPort}`;
  proxy = `http://127.0.0.1:${proxyPort}`;
  gateway = await spawnProcess(process.execPath, [MAIN, 'start'], {
    name: 'gatehouse start (dist)',
    cwd: dir,
    env: {
      GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
      GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxyPort}`,
      GATEHOUSE_DATA_DIR: join(dir, 'data'),
      // the default TLS port (8443) may be another test's
      GATEHOUSE_PROXY_TLS_LISTEN: 'off',
      GATEHOUSE_LOG_LEVEL: 'warn',
      // nothing may reach the gateway through a loader: it runs as plain JavaScript
      NODE_OPTIONS: '',
    },
    // the listening lines come once the proxy (every worker, with the default GATEHOUSE_WORKERS) and then the admin API listen
    readyPattern: /proxy listening on/,
    timeoutMs: 60_000,
  });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${admin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('gatehouse built to dist', () => {
  it('is one JavaScript file per entry point, with only the native and asset packages left outside', () => {
    const main = readFileSync(MAIN, 'utf8');
    expect(main.startsWith('#!/usr/bin/env node')).toBe(true);
    const loaded = [...main.matchAll(/^import [^'"]*['"]([^'"]+)['"];?$|__require\(['"]([^'"]+)['"]\)/gm)].map((m) => (m[1] ?? m[2])!);
    const packages = new Set(loaded.filter((s) => !s.startsWith('node:') && !s.startsWith('.') && !builtinModules.includes(s.split('/')[0]!)));
    // the CLI's runtime dependencies (installed in production) and pg's optional native binding (never installed)
    const cli = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const allowed = new Set([...Object.keys(cli.dependencies), 'pg-native']);
    expect([...packages].filter((name) => !allowed.has(name))).toEqual([]);
    expect(packages.has('@electric-sql/pglite')).toBe(true);
  });

  it('starts from dist and proxies a request through a route to the upstream', async () => {
    expect(gateway.isRunning()).toBe(true);
    expect((await post('/services', { name: 'echo', url: upstream.url })).status).toBe(201);
    expect((await post('/services/echo/routes', { name: 'built', paths: ['/built'] })).status).toBe(201);
    // the data plane serves the route once the snapshot of these writes reached it
    let res: Response | null = null;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
      res = await fetch(`${proxy}/built/hello?from=dist`);
      if (res.status === 200) break;
      await res.arrayBuffer();
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(res?.status).toBe(200);
    const echoed = (await res!.json()) as { method: string; path: string; query: Record<string, string> };
    expect(echoed).toMatchObject({ method: 'GET', path: '/hello', query: { from: 'dist' } });
    expect(upstream.received.at(-1)?.path).toBe('/hello');
  });

  it('serves the admin API documents from the installed packages', async () => {
    const doc = await fetch(`${admin}/openapi.json`);
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { openapi: string }).openapi).toBe('3.1.0');
    const bundle = await fetch(`${admin}/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    await bundle.arrayBuffer();
  });
});
