// deploy/local/cluster.sh with GATEHOUSE_ENFORCE_RBAC=on: it starts the control plane and a data plane, reports them
// ready through the status listeners (the admin API's /status wants a token), and stops them by their PIDs.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createTestDatabase, deleteRedisPrefix, freePorts, isAlive, SHARED_REDIS_URL, uniqueRedisPrefix, type TestDatabase } from '@gatehouse/testkit';

jest.setTimeout(300_000);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'deploy/local/cluster.sh');
const TOKEN = 'local-cluster-admin-token-8f2d';
const run = promisify(execFile);

let db: TestDatabase;
let runDir: string;
let prefix: string;
let ports: { admin: number; proxy: number; status: number; cpStatus: number; tls: number };
let env: NodeJS.ProcessEnv;

const script = (...args: string[]) => run('bash', [SCRIPT, ...args], { env, timeout: 240_000 });

beforeAll(async () => {
  db = await createTestDatabase('gh_local_cluster');
  runDir = mkdtempSync(join(tmpdir(), 'gatehouse-local-cluster-'));
  prefix = uniqueRedisPrefix('local-cluster');
  const [admin, proxy, status, cpStatus, tls] = await freePorts(5);
  ports = { admin: admin!, proxy: proxy!, status: status!, cpStatus: cpStatus!, tls: tls! };
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: db.url,
    REDIS_URL: SHARED_REDIS_URL,
    GATEHOUSE_REDIS_PREFIX: prefix,
    GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${ports.admin}`,
    GATEHOUSE_LOCAL_PROXY_PORT: String(ports.proxy),
    GATEHOUSE_LOCAL_STATUS_PORT: String(ports.status),
    GATEHOUSE_LOCAL_CP_STATUS_PORT: String(ports.cpStatus),
    GATEHOUSE_LOCAL_TLS_PORT: String(ports.tls),
    GATEHOUSE_LOCAL_RUN_DIR: runDir,
    GATEHOUSE_ENFORCE_RBAC: 'on',
    GATEHOUSE_ADMIN_TOKEN: TOKEN,
    GATEHOUSE_WORKERS: '1',
    GATEHOUSE_LOG_LEVEL: 'warn',
    GATEHOUSE_ACCESS_LOG: 'off',
  };
});

afterAll(async () => {
  // whatever happened above, the processes this test started go, by the PIDs the script recorded
  if (env) await script('stop').catch(() => {});
  if (runDir) rmSync(runDir, { recursive: true, force: true });
  if (prefix) await deleteRedisPrefix(SHARED_REDIS_URL, prefix);
  await db?.drop();
});

const pidOf = (name: string) => Number(readFileSync(join(runDir, `${name}.pid`), 'utf8').trim());

describe('deploy/local/cluster.sh with RBAC on', () => {
  it('starts a control plane and a data plane, reports them ready, and stops them', async () => {
    const started = await script('start', '-n', '1');
    expect(started.stdout).toMatch(new RegExp(`^control-plane +pid \\d+ +running +http://127\\.0\\.0\\.1:${ports.cpStatus}/status/ready → 200$`, 'm'));
    expect(started.stdout).toMatch(new RegExp(`^data-plane-1 +pid \\d+ +running +http://127\\.0\\.0\\.1:${ports.status}/status/ready → 200 +proxy :${ports.proxy}$`, 'm'));

    // RBAC is on: the admin API wants the token, and answers with it
    const admin = `http://127.0.0.1:${ports.admin}`;
    expect((await fetch(`${admin}/status`)).status).toBe(401);
    expect((await fetch(`${admin}/status`, { headers: { 'Kong-Admin-Token': TOKEN } })).status).toBe(200);
    const dataPlanes = (await (await fetch(`${admin}/clustering/data-planes`, { headers: { 'Kong-Admin-Token': TOKEN } })).json()) as { data: Array<{ id: string }> };
    expect(dataPlanes.data.map((d) => d.id)).toContain('local-data-plane-1');

    const status = await script('status');
    expect(status.stdout).toMatch(/^control-plane +pid \d+ +running .* → 200$/m);

    const pids = [pidOf('control-plane'), pidOf('data-plane-1')];
    expect(pids.every(isAlive)).toBe(true);
    await script('stop');
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(join(runDir, 'control-plane.pid'))).toBe(false);
    expect((await script('status')).stdout.trim()).toBe('not running');
  });
});
