import { afterEach, describe, expect, it } from '@jest/globals';
import { makeTarget, makeUpstream } from '@gatehouse/testkit';
import type { Address } from './balancer';
import { StaticResolver } from './dns';
import type { Observation } from './health';
import { BalancerRegistry } from './registry';
import { compileUpstreams, type UpstreamSpec } from './spec';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

let registry: BalancerRegistry | null = null;
afterEach(() => registry?.close());

describe('BalancerRegistry', () => {
  it('checks thousands of addresses on one timer, at most `concurrency` at once per upstream', async () => {
    const running = new Map<string, number>();
    let most = 0;
    const probed = new Set<Address>();
    const prober = async (a: Address, spec: UpstreamSpec): Promise<Observation> => {
      const now = (running.get(spec.id) ?? 0) + 1;
      running.set(spec.id, now);
      most = Math.max(most, now);
      probed.add(a);
      await new Promise((r) => setImmediate(r));
      running.set(spec.id, running.get(spec.id)! - 1);
      return 'success';
    };
    const before = timers();
    registry = new BalancerRegistry({ prober, checkTickMs: 5, resolver: new StaticResolver() });
    const upstreams = Array.from({ length: 20 }, (_, u) =>
      makeUpstream({ name: `u${u}.test`, healthchecks: { active: { concurrency: 5, healthy: { interval: 30 }, unhealthy: { interval: 30 } } } }),
    );
    const targets = upstreams.flatMap((u, i) => Array.from({ length: 100 }, (_, t) => makeTarget(u, { target: `10.0.${i}.${t + 1}:80` })));
    registry.update(compileUpstreams({ upstreams, targets }));
    expect(timers() - before).toBeLessThanOrEqual(2);
    await until(() => probed.size === 2000, 'every address to be checked once');
    expect(most).toBe(5);
    expect(timers() - before).toBeLessThanOrEqual(2);
  });

  it('keeps health across snapshots for targets that stay and applies manual commands by target and address', () => {
    registry = new BalancerRegistry({ resolver: new StaticResolver() });
    const upstream = makeUpstream({ name: 'keep.test' });
    const a = makeTarget(upstream, { target: '10.0.0.1:80' });
    const b = makeTarget(upstream, { target: '10.0.0.2:80' });
    registry.update(compileUpstreams({ upstreams: [upstream], targets: [a, b] }));
    expect(registry.applyManual({ upstream_id: upstream.id, target: '10.0.0.2:80', healthy: false })).toBe(true);
    expect(registry.applyManual({ upstream_id: upstream.id, target: '10.9.9.9:80', healthy: false })).toBe(false);
    registry.update(compileUpstreams({ upstreams: [upstream], targets: [a, b] }));
    const report = registry.healthReport()[upstream.id]!;
    expect(report.targets.map((t) => `${t.target}=${t.health}`)).toEqual(['10.0.0.1:80=HEALTHCHECKS_OFF', '10.0.0.2:80=UNHEALTHY']);
    registry.applyManual({ upstream_id: upstream.id, target: '10.0.0.2:80', address: '10.0.0.2:80', healthy: true });
    expect(registry.healthReport()[upstream.id]!.targets[1]!.health).toBe('HEALTHCHECKS_OFF');
  });

  it('resolves names with A and AAAA answers and honours the TTL', async () => {
    const resolver = new StaticResolver();
    resolver.set('multi.test', ['10.1.1.1', '10.1.1.2', 'fd00::1'], 1);
    registry = new BalancerRegistry({ resolver, dnsTickMs: 20 });
    const upstream = makeUpstream({ name: 'named.test' });
    registry.update(compileUpstreams({ upstreams: [upstream], targets: [makeTarget(upstream, { target: 'multi.test:81' })] }));
    const balancer = registry.get('named.test')!;
    await until(() => balancer.addresses.length === 3, 'three addresses');
    expect(balancer.addresses.map((a) => a.key)).toEqual(['10.1.1.1:81', '10.1.1.2:81', '[fd00::1]:81']);
    resolver.set('multi.test', ['10.1.1.3'], 1);
    await until(() => balancer.addresses.length === 1, 'the new answer after the TTL', 5_000);
    expect(balancer.addresses[0]!.key).toBe('10.1.1.3:81');
  });

  it('in a proxy worker: no active checks, passive results go to the primary, the primary’s health is mirrored', async () => {
    const prober = async (): Promise<Observation> => 'http_failure';
    const sent: Array<[string, string, Observation]> = [];
    const upstream = makeUpstream({
      name: 'mirror.test',
      healthchecks: { active: { healthy: { interval: 1 }, unhealthy: { interval: 1, http_failures: 1 } }, passive: { unhealthy: { http_failures: 1 } } },
    });
    const specs = compileUpstreams({ upstreams: [upstream], targets: [makeTarget(upstream, { target: '10.0.0.1:80' }), makeTarget(upstream, { target: '10.0.0.2:80' })] });
    // the primary: checks actively, counts passive results
    const primary = new BalancerRegistry({ prober, checkTickMs: 5, resolver: new StaticResolver() });
    registry = new BalancerRegistry({ prober, checkTickMs: 5, resolver: new StaticResolver(), activeChecks: false, passiveSink: (...o) => sent.push(o) });
    const worker = registry;
    try {
      worker.mirrorHealth([[upstream.id, '10.0.0.2:80', false]]);
      worker.update(specs);
      // a state mirrored before the address existed applies once it does
      expect(worker.healthStates()).toEqual([
        [upstream.id, '10.0.0.1:80', true],
        [upstream.id, '10.0.0.2:80', false],
      ]);
      const balancer = worker.getById(upstream.id)!;
      worker.passive(balancer, balancer.addresses[0]!, 'http_failure');
      expect(sent).toEqual([[upstream.id, '10.0.0.1:80', 'http_failure']]);
      // the worker's own counters did not move: only the primary decides
      expect(balancer.addresses[0]!.health.healthy).toBe(true);
      primary.update(specs);
      await until(() => primary.healthStates().every(([, , healthy]) => !healthy), 'the primary’s checks to fail both addresses');
      // the probes were the primary's: the worker's checker never ran
      expect(primary.checker.probes).toBeGreaterThanOrEqual(2);
      expect(worker.checker.probes).toBe(0);
      worker.mirrorHealth(primary.healthStates());
      expect(worker.healthStates()).toEqual(primary.healthStates());
    } finally {
      primary.close();
    }
  });
});
