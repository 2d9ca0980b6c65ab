// `gatehouse start` opens its admin API, and prints its ready line, only once every proxy listener accepts
// connections, plain and TLS. Its data plane's status listener likewise answers only once the proxy does. (With
// several proxy workers the node waits for every worker to listen before either; workers.test.ts runs two.) The ports are polled from before the process starts; the moment the admin port (or the
// status port) first accepts a connection, the proxy ports must too.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { freePorts, gatehouseNodeArgs, spawnProcess, type SpawnedProcess } from '@gatehouse/testkit';

jest.setTimeout(420_000);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** a first start initialises the embedded database and makes the default certificate: generous on a busy machine */
const START_MS = 300_000;

let dir: string | null = null;
let starting: Promise<SpawnedProcess> | null = null;

afterAll(async () => {
  // stopped whether or not it came up, and whatever the assertions said
  await starting?.then((gateway) => gateway.stop(), () => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** whether a TCP connection to 127.0.0.1:port is accepted now */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** polls `port` until it first accepts, then at once reports which of `others` accept */
async function othersWhenFirstAccepts(port: number, others: number[], timeoutMs: number): Promise<boolean[]> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await accepts(port)) return Promise.all(others.map(accepts));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`port ${port} did not accept a connection within ${timeoutMs} ms`);
}

describe('gatehouse start', () => {
  it('opens the admin API and the status listener only once every proxy listener accepts', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-start-order-'));
    const [admin, proxy, tls, status] = (await freePorts(4)) as [number, number, number, number];
    const proxies = [proxy, tls];
    // the watchers start before the process: they see the first moment each port opens
    const atAdmin = othersWhenFirstAccepts(admin, proxies, START_MS);
    const atStatus = othersWhenFirstAccepts(status, proxies, START_MS);
    starting = spawnProcess(process.execPath, gatehouseNodeArgs('start'), {
      name: 'gatehouse start',
      cwd: ROOT,
      env: {
        GATEHOUSE_ADMIN_LISTEN: `127.0.0.1:${admin}`,
        GATEHOUSE_PROXY_LISTEN: `127.0.0.1:${proxy}`,
        GATEHOUSE_PROXY_TLS_LISTEN: `127.0.0.1:${tls}`,
        GATEHOUSE_STATUS_LISTEN: `127.0.0.1:${status}`,
        GATEHOUSE_DATA_DIR: dir,
        GATEHOUSE_WORKERS: '1',
        GATEHOUSE_ACCESS_LOG: 'off',
        GATEHOUSE_LOG_LEVEL: 'warn',
      },
      readyPattern: /Ctrl-C stops/,
      timeoutMs: START_MS,
    });
    expect(await atAdmin).toEqual([true, true]);
    expect(await atStatus).toEqual([true, true]);
    const gateway = await starting;
    // the ready line comes after every listener's line
    const lines = gateway.stdout().split('\n').filter((line) => /listening on|Ctrl-C stops/.test(line));
    expect(lines.map((line) => line.replace(/^gatehouse \S+: /, '').replace(/ on .*$/, '').replace(/^.*; Ctrl-C stops$/, 'ready'))).toEqual([
      'admin API listening',
      'proxy listening',
      'proxy TLS listening',
      'status API listening',
      'ready',
    ]);
  });
});
