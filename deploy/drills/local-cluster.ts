// A Gatehouse cluster as local processes for the failover drills: control planes on a database of their own (on the
// Postgres at GATEHOUSE_TEST_POSTGRES_URL, default the local one), data planes, all over the REDIS_URL given; stopped by PID.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, freePorts, spawnProcess, type SpawnedProcess, type TestDatabase } from '@gatehouse/testkit';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'packages/cli/src/main.ts');

export interface Node {
  name: string;
  /** the admin API (control planes) or the proxy (data planes) */
  url: string;
  /** the status listener: `/status` and `/status/ready` */
  statusUrl: string;
  process: SpawnedProcess;
}

export interface LocalCluster {
  controlPlanes: Node[];
  dataPlanes: Node[];
  /** GATEHOUSE_REDIS_PREFIX of every node */
  redisPrefix: string;
  stop(): Promise<void>;
}

function gatehouse(name: string, command: 'control-plane' | 'data-plane', env: NodeJS.ProcessEnv): Promise<SpawnedProcess> {
  return spawnProcess(process.execPath, ['--import', 'tsx', CLI, command], {
    name,
    cwd: ROOT,
    env: { GATEHOUSE_LOG_LEVEL: 'warn', GATEHOUSE_WORKERS: '1', GATEHOUSE_PROXY_TLS_LISTEN: 'off', ...env },
    readyPattern: command === 'control-plane' ? /admin API listening/ : /status API listening/,
    timeoutMs: 180_000,
  });
}

export async function startLocalCluster(redisUrl: string, counts = { controlPlanes: 2, dataPlanes: 2 }): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-drill-'));
  const database: TestDatabase = await createTestDatabase({ prefix: 'gh_drill' });
  const common = { REDIS_URL: redisUrl, GATEHOUSE_REDIS_PREFIX: `drill:${randomBytes(3).toString('hex')}:`, GATEHOUSE_CLUSTER_SECRET: randomBytes(32).toString('hex') };
  const ports = await freePorts(2 * (counts.controlPlanes + counts.dataPlanes));
  const controlPlanes: Node[] = [];
  const dataPlanes: Node[] = [];
  const stop = async () => {
    await Promise.all([...controlPlanes, ...dataPlanes].map((n) => n.process.stop()));
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < counts.controlPlanes; i++) {
      const [admin, status] = [ports[2 * i]!, ports[2 * i + 1]!];
      const env = {
        ...common,
        DATABASE_URL: database.url,
        GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${admin}`,
        GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${status}`,
        // the second control plane shares the first one's data directory, so both hold the same keyring
        GATEHOUSE_DATA_DIR: join(dir, 'cp'),
      };
      controlPlanes.push({ name: `control plane ${i + 1}`, url: `http://127.0.0.1:${admin}`, statusUrl: `http://127.0.0.1:${status}`, process: await gatehouse(`control plane ${i + 1}`, 'control-plane', env) });
    }
    for (let i = 0; i < counts.dataPlanes; i++) {
      const [proxy, status] = [ports[2 * (counts.controlPlanes + i)]!, ports[2 * (counts.controlPlanes + i) + 1]!];
      const env = { ...common, GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxy}`, GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${status}`, GATEHOUSE_DATA_DIR: join(dir, `dp${i}`), GATEHOUSE_DATA_PLANE_ID: `drill-dp-${i + 1}` };
      dataPlanes.push({ name: `data plane ${i + 1}`, url: `http://127.0.0.1:${proxy}`, statusUrl: `http://127.0.0.1:${status}`, process: await gatehouse(`data plane ${i + 1}`, 'data-plane', env) });
    }
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return { controlPlanes, dataPlanes, redisPrefix: common.GATEHOUSE_REDIS_PREFIX, stop };
}
