// Kong's setting names on the real `gatehouse` process: Kong 3.9's kong.conf.default with every value given, plus the
// KONG_* environment of Kong's docker-compose (Postgres, listeners, logs, a password file), start Gatehouse as they
// start Kong; what does not apply is logged once by name; `gatehouse check` validates a kong.conf.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createTestDatabase, freePorts, gatehouseNodeArgs, spawnProcess, startEchoUpstream, type EchoUpstream, type SpawnedProcess, type TestDatabase } from '@gatehouse/testkit';

jest.setTimeout(240_000);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KONG_DEFAULTS = join(ROOT, 'tests/e2e/fixtures/kong-defaults.conf');

function check(conf: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, gatehouseNodeArgs('check', conf), { cwd: ROOT, env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'warn' } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("gatehouse started from Kong's kong.conf defaults and docker-compose environment", () => {
  let db: TestDatabase;
  let upstream: EchoUpstream;
  let node: SpawnedProcess;
  let prefix: string;
  let adminUrl: string;
  let proxyUrl: string;
  let statusUrl: string;
  let dbUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'kong_settings' });
    upstream = await startEchoUpstream();
    prefix = mkdtempSync(join(tmpdir(), 'gatehouse-kong-prefix-'));
    dbUrl = db.url;
    const url = new URL(db.url);
    writeFileSync(join(prefix, 'pg_password'), `${decodeURIComponent(url.password)}\n`);
    const [proxyPort, adminPort, statusPort] = await freePorts(3);
    adminUrl = `http://127.0.0.1:${adminPort}`;
    proxyUrl = `http://127.0.0.1:${proxyPort}`;
    statusUrl = `http://127.0.0.1:${statusPort}`;
    node = await spawnProcess(process.execPath, gatehouseNodeArgs('start', '--conf', KONG_DEFAULTS), {
      name: 'gatehouse start --conf',
      cwd: ROOT,
      env: {
        GATEHOUSE_WORKERS: '1',
        KONG_DATABASE: 'postgres',
        KONG_PG_HOST: url.hostname,
        KONG_PG_PORT: url.port || '5432',
        KONG_PG_USER: decodeURIComponent(url.username),
        KONG_PG_DATABASE: url.pathname.slice(1),
        KONG_PG_PASSWORD_FILE: join(prefix, 'pg_password'),
        KONG_ADMIN_ACCESS_LOG: '/dev/stdout',
        KONG_ADMIN_ERROR_LOG: '/dev/stderr',
        KONG_PROXY_ACCESS_LOG: '/dev/stdout',
        KONG_PROXY_ERROR_LOG: '/dev/stderr',
        KONG_PROXY_LISTEN: `127.0.0.1:${proxyPort} reuseport backlog=16384`,
        KONG_ADMIN_LISTEN: `127.0.0.1:${adminPort} reuseport backlog=16384`,
        KONG_STATUS_LISTEN: `127.0.0.1:${statusPort}`,
        KONG_PREFIX: prefix,
        KONG_LOG_LEVEL: 'warn',
      },
      readyPattern: /proxy listening/,
      timeoutMs: Number(process.env.E2E_START_TIMEOUT_MS ?? 60_000),
    });
  });

  afterAll(async () => {
    await node?.stop();
    await upstream?.close();
    await db?.drop();
    if (prefix) rmSync(prefix, { recursive: true, force: true });
  });

  it('opens the Postgres database and the listeners the Kong names give', async () => {
    expect(node.stdout()).toContain('database: postgres');
    const root = await fetch(`${adminUrl}/`);
    expect(root.status).toBe(200);
    // what Kong Manager's Overview shows: the datastore and the ports
    const { configuration } = (await root.json()) as { configuration: Record<string, any> };
    const db = new URL(dbUrl);
    expect(configuration).toMatchObject({ database: 'postgres', pg_host: db.hostname, pg_port: Number(db.port || 5432), pg_database: db.pathname.slice(1), router_flavor: 'traditional_compatible', role: 'traditional' });
    expect(configuration.proxy_listeners[0]).toMatchObject({ port: Number(new URL(proxyUrl).port), reuseport: true, backlog: '=16384' });
    expect(configuration.admin_listeners[0]).toMatchObject({ port: Number(new URL(adminUrl).port) });
    expect((await fetch(`${statusUrl}/status`)).status).toBe(200);
    // the data directory is Kong's prefix
    expect(readdirSync(prefix).length).toBeGreaterThan(1);
  });

  it('proxies through a route created on the admin API', async () => {
    const service = await fetch(`${adminUrl}/services`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'echo', url: upstream.url }) });
    expect(service.status).toBe(201);
    const route = await fetch(`${adminUrl}/services/echo/routes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ paths: ['/kong-conf'] }) });
    expect(route.status).toBe(201);
    let status = 0;
    for (let i = 0; i < 200 && status !== 200; i++) {
      status = (await fetch(`${proxyUrl}/kong-conf/x`)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(200);
  });

  it('logs each setting that does not apply once, by name', () => {
    const lines = node.stderr().split('\n');
    const about = (name: string) => lines.filter((l) => l.includes(`Kong setting '${name}'`));
    expect(about('mem_cache_size')).toHaveLength(1);
    expect(about('cluster_mtls')).toHaveLength(1);
    expect(about('anonymous_reports')).toHaveLength(1);
    expect(about('admin_error_log')).toHaveLength(1);
    // settings that map are not listed
    expect(about('pg_host')).toHaveLength(0);
    expect(about('headers')).toHaveLength(0);
  });

  it('gatehouse check validates a kong.conf and refuses a bad one', async () => {
    const bad = join(prefix, 'bad.conf');
    writeFileSync(bad, 'proxy_listen = 0.0.0.0:8000 turbo\n');
    const [good, refused] = await Promise.all([check(KONG_DEFAULTS), check(bad)]);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain(`configuration at ${KONG_DEFAULTS} is valid`);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("unknown flag 'turbo'");
  });
});
