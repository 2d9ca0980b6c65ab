// Two control planes on one Postgres database, each taking writes, feeding the same data planes: versions are taken
// in the write transactions (one row lock orders them), so the bus announces one increasing sequence whoever publishes,
// and a control plane killed (SIGKILL, by PID) under writes loses nothing it acknowledged: the other publishes it.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { AdminWriter, convergence, SHARED_REDIS_URL, ServeLoad, startEchoUpstream, VersionWatch, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp, getJson, waitUntil } from './support/helpers';
import { adminClient, startTopology, type Topology } from './support/topology';

jest.setTimeout(240_000);

interface Heard {
  version: number;
  hash: string;
  from: number | null;
}

describe('two control planes on one database', () => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let subscriber: Redis;
  const heard: Heard[] = [];

  const adminUrls = () => topology.controlPlanes.map((cp) => cp.adminUrl);
  const proxies = () => topology.dataPlanes.map((dp) => dp.proxyUrl);

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology('cluster', { controlPlanes: 2 });
    subscriber = new Redis(SHARED_REDIS_URL);
    await subscriber.subscribe(`${topology.redisPrefix!}config`);
    subscriber.on('message', (_channel: string, text: string) => {
      const a = JSON.parse(text) as { version: number; hash: string; delta?: { from: number } };
      heard.push({ version: a.version, hash: a.hash, from: a.delta ? a.delta.from : null });
    });
    expect((await adminClient(topology.adminUrl).post('/services', { name: 'echo', url: upstream.url })).status).toBe(201);
    expect((await adminClient(topology.adminUrl).post('/services/echo/routes', { name: 'steady', 'paths[]': '/steady' })).status).toBe(201);
    await topology.converge(30_000);
  });

  afterAll(async () => {
    await cleanUp(
      () => subscriber?.disconnect(),
      () => topology?.stop(),
      () => upstream?.close(),
    );
  });

  /** every announcement so far: no version twice, each one after the one before, and no delta leaving a hole */
  function expectOneOrder(): void {
    for (let i = 1; i < heard.length; i++) {
      const [before, now] = [heard[i - 1]!, heard[i]!];
      expect({ at: i, version: now.version, after: before.version, ok: now.version > before.version }).toEqual({ at: i, version: now.version, after: before.version, ok: true });
      if (now.from !== null) expect({ at: i, from: now.from, ok: now.from <= before.version }).toEqual({ at: i, from: now.from, ok: true });
    }
  }

  it('takes writes through both control planes and publishes one order of versions', async () => {
    const each = topology.controlPlanes.map((cp, i) => new AdminWriter(() => [cp.adminUrl], 'echo', `both-${i}`, 10));
    await waitUntil('40 writes through each control plane', () => each.every((w) => w.acknowledged.length >= 40), 120_000);
    const written = await Promise.all(each.map((w) => w.stop()));
    for (const w of written) expect(w.unacknowledged).toBe(0);
    const paths = written.flatMap((w) => w.acknowledged);
    await convergence(proxies(), paths, 30_000);
    const [one, two] = await Promise.all(adminUrls().map((url) => getJson(`${url}/status`)));
    expect(one.config_version).toBe(two.config_version);
    await waitUntil('the last version announced', () => heard.at(-1)?.version === one.config_version, 15_000);
    expectOneOrder();
    // every write is a version of its own: the versions run without a gap from the first write on
    expect(one.config_version).toBeGreaterThanOrEqual(paths.length + 2);
  });

  it('loses no acknowledged write when one control plane is killed under writes; the other publishes everything', async () => {
    const [survivor, victim] = topology.controlPlanes;
    const load = new ServeLoad(proxies().map((p) => `${p}/steady`));
    const watch = new VersionWatch(topology.dataPlanes.map((dp) => dp.statusUrl));
    const toSurvivor = new AdminWriter(() => [survivor!.adminUrl], 'echo', 'kill-a', 10);
    const toVictim = new AdminWriter(() => [victim!.adminUrl], 'echo', 'kill-b', 10);
    await waitUntil('writes through both', () => toSurvivor.acknowledged.length >= 10 && toVictim.acknowledged.length >= 10, 60_000);
    victim!.process.signal('SIGKILL');
    await victim!.process.exited;
    const killedAt = Date.now();
    await waitUntil('writes to the survivor after the kill', () => toSurvivor.acknowledged.length >= 30, 60_000);
    const written = [await toSurvivor.stop(), await toVictim.stop()];
    const paths = written.flatMap((w) => w.acknowledged);
    const seconds = await convergence(proxies(), paths, 30_000);
    const { config_version: version } = await getJson(`${survivor!.adminUrl}/status`);
    await waitUntil('the last version announced', () => heard.at(-1)?.version === version, 15_000);
    const served = await load.stop();
    const regressions = await watch.stop();
    process.stdout.write(
      `control plane killed: ${paths.length} acknowledged writes, none lost (${written[1]!.unacknowledged} refused by the killed one); ` +
        `${served.failures.length} of ${served.ok + served.failures.length} requests failed; converged ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill (${seconds.toFixed(1)} s after the writes stopped)\n`,
    );
    expect(served.failures).toEqual([]);
    expect(regressions).toEqual([]);
    expectOneOrder();
  });
});
