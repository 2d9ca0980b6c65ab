import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { makeRoute, makeService, makeSnapshot, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { compile } from '../src';
import { startDataPlane, type RunningDataPlane } from './harness';

describe('configuration swap', () => {
  let first: EchoUpstream;
  let second: EchoUpstream;
  let gw: RunningDataPlane;

  beforeAll(async () => {
    first = await startEchoUpstream();
    second = await startEchoUpstream();
    gw = await startDataPlane(null);
  });

  afterAll(async () => {
    await gw.close();
    await first.close();
    await second.close();
  });

  const versionTo = (echoUrl: string, version: number, path = '/app') => {
    const service = makeService({ name: 'app', url: `${echoUrl}/v${version}` });
    return makeSnapshot({ services: [service], routes: [makeRoute({ paths: [path], service: { id: service.id } })] }, version);
  };

  it('serves 404 before any configuration, then the swapped-in one', async () => {
    expect((await gw.send('/app')).status).toBe(404);
    gw.load(versionTo(first.url, 1));
    expect((await gw.send('/app')).json.path).toBe('/v1');
  });

  it('lets requests in flight finish on the configuration they started with', async () => {
    gw.load(versionTo(first.url, 1));
    const before = first.received.length;
    const inFlight = Array.from({ length: 5 }, () => gw.send('/app/slow', { headers: { 'x-echo-delay-ms': '1500' } }));
    // all five routed on version 1: the upstream holds them (it answers after its delay)
    while (first.received.length < before + 5) await new Promise((resolve) => setTimeout(resolve, 5));
    const previous = gw.holder.swap(compile(versionTo(second.url, 2, '/other')));
    expect(previous.version).toBe(1);
    expect(gw.holder.current.version).toBe(2);

    // new requests see version 2 at once: /app is gone, /other goes to the second upstream
    expect((await gw.send('/app/x')).status).toBe(404);
    expect((await gw.send('/other/x')).json.path).toBe('/v2/x');
    // the five requests already routed finish on version 1, with no error
    const replies = await Promise.all(inFlight);
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.json.path).toBe('/v1/slow');
    }
  });

  it('keeps serving while swapping repeatedly under load, every request answered by one version or the other', async () => {
    gw.load(versionTo(first.url, 3));
    let swaps = 0;
    const swapper = setInterval(() => {
      swaps++;
      gw.load(swaps % 2 ? versionTo(second.url, 4 + swaps) : versionTo(first.url, 4 + swaps));
    }, 5);
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => gw.send(`/app/${i}`)));
    clearInterval(swapper);
    expect(swaps).toBeGreaterThan(0);
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.json.path).toMatch(/^\/v\d+\/\d+$/);
    }
  });

  it('notifies swap listeners with the new and previous configuration', () => {
    const seen: Array<[number, number]> = [];
    const stop = gw.holder.onSwap((next, previous) => seen.push([next.version, previous.version]));
    const before = gw.holder.current.version;
    gw.load(versionTo(first.url, 100));
    stop();
    gw.load(versionTo(first.url, 101));
    expect(seen).toEqual([[100, before]]);
  });
});
