// Safe defaults of the real `gatehouse` process: a cluster secret under 32 bytes is refused at start (non-zero exit,
// a clear message), and an admin API reachable beyond loopback with RBAC off is warned about on every start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { freePorts, gatehouseNodeArgs, spawnProcess, type SpawnedProcess } from '@gatehouse/testkit';

jest.setTimeout(120_000);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dirs: string[] = [];
const running: SpawnedProcess[] = [];

afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function gatehouse(command: string, env: NodeJS.ProcessEnv, readyPattern?: RegExp): Promise<SpawnedProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-safe-defaults-'));
  dirs.push(dir);
  return spawnProcess(process.execPath, gatehouseNodeArgs(command), {
    name: `gatehouse ${command}`,
    cwd: ROOT,
    env: { GATEHOUSE_LOG_LEVEL: 'warn', GATEHOUSE_DATA_DIR: dir, GATEHOUSE_PROXY_TLS_LISTEN: 'off', GATEHOUSE_WORKERS: '1', ...env },
    readyPattern,
    timeoutMs: 60_000,
  });
}

describe('a cluster secret under 32 bytes is refused', () => {
  const cases: Array<[string, string, NodeJS.ProcessEnv]> = [
    ['control-plane', 'x', { DATABASE_URL: 'postgres://127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' }],
    ['control-plane', 'a'.repeat(31), { DATABASE_URL: 'postgres://127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' }],
    ['data-plane', 'short-secret', { REDIS_URL: 'redis://127.0.0.1:1' }],
    ['start', 'é'.repeat(15), {}],
  ];

  it.each(cases)('gatehouse %s with a %p secret exits non-zero and says why', async (command, secret, env) => {
    const proc = await gatehouse(command, { ...env, GATEHOUSE_CLUSTER_SECRET: secret, GATEHOUSE_ADMIN_LISTEN: '127.0.0.1:0', GATEHOUSE_PROXY_LISTEN: '127.0.0.1:0' });
    const exit = await proc.exited;
    expect(exit.code).toBe(1);
    const bytes = Buffer.byteLength(secret);
    expect(proc.stderr()).toContain(`GATEHOUSE_CLUSTER_SECRET is too short (${bytes} bytes): it must be at least 32 bytes`);
    expect(proc.stdout()).not.toMatch(/listening/);
  });
});

describe('an admin API beyond loopback with RBAC off is warned about', () => {
  const WARNING = /"level":"warn".*reachable beyond this machine, with RBAC off/;

  async function startEmbedded(env: NodeJS.ProcessEnv): Promise<SpawnedProcess> {
    const [admin, proxy] = await freePorts(2);
    const proc = await gatehouse(
      'start',
      { GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxy}`, GATEHOUSE_ADMIN_LISTEN: `${env.ADMIN_HOST}:${admin}`, ...env },
      /proxy listening/,
    );
    running.push(proc);
    return proc;
  }

  it('on 0.0.0.0 with RBAC off (and a 32-byte secret accepted): a warning at start', async () => {
    const proc = await startEmbedded({ ADMIN_HOST: '0.0.0.0', GATEHOUSE_CLUSTER_SECRET: 'k'.repeat(32) });
    expect(proc.stderr()).toMatch(WARNING);
    expect(proc.stderr()).toContain('Set GATEHOUSE_ENFORCE_RBAC');
    await proc.stop();
  });

  it('no warning on loopback, nor with RBAC on', async () => {
    const loopback = await startEmbedded({ ADMIN_HOST: '127.0.0.1' });
    // the warning is written before the listening lines, so once they are out it would be there
    expect(loopback.stderr()).not.toMatch(WARNING);
    await loopback.stop();
    const enforced = await startEmbedded({ ADMIN_HOST: '0.0.0.0', GATEHOUSE_ENFORCE_RBAC: 'on', GATEHOUSE_ADMIN_TOKEN: 'safe-defaults-admin-token-0123456789' });
    expect(enforced.stderr()).not.toMatch(WARNING);
    await enforced.stop();
  });
});
