import { describe, expect, it } from '@jest/globals';
import { makeTarget, makeUpstream } from '@gatehouse/testkit';
import { UpstreamBalancer } from './balancer';
import { AddressHealth } from './health';
import { compileUpstreams } from './spec';

function balancerOf(upstreamFields: Record<string, unknown>, targets: Array<Record<string, unknown>>): UpstreamBalancer {
  const upstream = makeUpstream({ name: 'svc.test', ...upstreamFields });
  const specs = compileUpstreams({ upstreams: [upstream], targets: targets.map((t) => makeTarget(upstream, t)) });
  return new UpstreamBalancer(specs.get('svc.test')!);
}

function tally(b: UpstreamBalancer, n: number, key: (i: number) => string | null = () => null): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const a = b.pick(key(i), null)!;
    out[a.key] = (out[a.key] ?? 0) + 1;
  }
  return out;
}

describe('UpstreamBalancer', () => {
  it('round-robin follows the weights exactly over each cycle', () => {
    const b = balancerOf({}, [{ target: '10.0.0.1:80', weight: 30 }, { target: '10.0.0.2:80', weight: 10 }, { target: '10.0.0.3:80', weight: 0 }]);
    expect(tally(b, 400)).toEqual({ '10.0.0.1:80': 300, '10.0.0.2:80': 100 });
  });

  it('skips unhealthy addresses and has none when all are down', () => {
    const b = balancerOf({}, [{ target: '10.0.0.1:80' }, { target: '10.0.0.2:80' }]);
    b.addresses[0]!.health.set(false);
    expect(tally(b, 10)).toEqual({ '10.0.0.2:80': 10 });
    b.addresses[1]!.health.set(false);
    expect(b.pick(null, null)).toBeNull();
  });

  it('honours the health threshold of the upstream', () => {
    const b = balancerOf({ healthchecks: { threshold: 60 } }, [{ target: '10.0.0.1:80' }, { target: '10.0.0.2:80' }]);
    expect(b.pick(null, null)).not.toBeNull();
    b.addresses[0]!.health.set(false);
    expect(b.pick(null, null)).toBeNull();
  });

  it('least-connections prefers the address with the fewest requests in flight per weight', () => {
    const b = balancerOf({ algorithm: 'least-connections' }, [{ target: '10.0.0.1:80' }, { target: '10.0.0.2:80' }]);
    b.addresses[0]!.active = 5;
    expect(b.pick(null, null)!.key).toBe('10.0.0.2:80');
    b.addresses[1]!.active = 9;
    expect(b.pick(null, null)!.key).toBe('10.0.0.1:80');
  });

  it('latency prefers the address with the lowest moving average', () => {
    const b = balancerOf({ algorithm: 'latency' }, [{ target: '10.0.0.1:80' }, { target: '10.0.0.2:80' }]);
    b.addresses[0]!.ewma = 50;
    b.addresses[1]!.ewma = 5;
    expect(tally(b, 5)).toEqual({ '10.0.0.2:80': 5 });
  });

  it('consistent-hashing keeps a key on one address and a retry avoids it', () => {
    const b = balancerOf({ algorithm: 'consistent-hashing', hash_on: 'header', hash_on_header: 'x-user' }, [
      { target: '10.0.0.1:80' },
      { target: '10.0.0.2:80' },
      { target: '10.0.0.3:80' },
    ]);
    const first = b.pick('alice', null)!;
    for (let i = 0; i < 20; i++) expect(b.pick('alice', null)).toBe(first);
    expect(b.pick('alice', new Set([first]))).not.toBe(first);
  });

  it('keeps addresses and their health when the same targets come back in a new snapshot', () => {
    const upstream = makeUpstream({ name: 'svc.test' });
    const t1 = makeTarget(upstream, { target: '10.0.0.1:80' });
    const b = new UpstreamBalancer(compileUpstreams({ upstreams: [upstream], targets: [t1] }).get('svc.test')!);
    b.addresses[0]!.health.set(false);
    const t2 = makeTarget(upstream, { target: '10.0.0.2:80' });
    b.adopt(compileUpstreams({ upstreams: [upstream], targets: [t1, t2] }).get('svc.test')!);
    expect(b.addresses.map((a) => `${a.key}=${a.health.healthy}`)).toEqual(['10.0.0.1:80=false', '10.0.0.2:80=true']);
  });
});

describe('AddressHealth', () => {
  const limits = { successes: 2, http_failures: 3, tcp_failures: 1, timeouts: 2 };
  it('flips to unhealthy at a failure threshold and back after enough successes', () => {
    const h = new AddressHealth();
    expect(h.record('http_failure', limits)).toBe(false);
    expect(h.record('http_failure', limits)).toBe(false);
    expect(h.record('http_failure', limits)).toBe(true);
    expect(h.healthy).toBe(false);
    expect(h.record('success', limits)).toBe(false);
    expect(h.record('success', limits)).toBe(true);
    expect(h.healthy).toBe(true);
  });

  it('a success clears the failure counters; a zero threshold never flips', () => {
    const h = new AddressHealth();
    h.record('timeout', limits);
    h.record('success', limits);
    expect(h.record('timeout', limits)).toBe(false);
    const off = new AddressHealth();
    for (let i = 0; i < 10; i++) off.record('http_failure', { successes: 0, http_failures: 0, tcp_failures: 0, timeouts: 0 });
    expect(off.healthy).toBe(true);
  });
});
