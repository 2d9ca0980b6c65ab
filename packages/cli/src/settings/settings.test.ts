import { describe, expect, it } from '@jest/globals';
import { availableParallelism } from 'node:os';
import { usableCores } from '../cpu-count';
import { parseListen, parseWorkers, readSettings } from './index';

describe('readSettings', () => {
  it('wraps the Redis key prefix in a hash tag for a Redis Cluster, so the keys of a deployment share a slot', () => {
    expect(readSettings({ REDIS_URL: 'redis+cluster://10.0.0.1:7000,10.0.0.2:7000' }, 'data_plane').redisPrefix).toBe('{gatehouse:}');
    expect(readSettings({ REDIS_URL: 'redis+cluster://10.0.0.1:7000', GATEHOUSE_REDIS_PREFIX: '{edge}:gh:' }, 'data_plane').redisPrefix).toBe('{edge}:gh:');
    expect(readSettings({ REDIS_URL: 'redis://10.0.0.1:6379' }, 'data_plane').redisPrefix).toBe('gatehouse:');
  });

  it("reads GATEHOUSE_ROUTER_FLAVOR as Kong's router_flavor", () => {
    expect(readSettings({}, 'all').routerFlavor).toBe('traditional_compatible');
    expect(readSettings({ GATEHOUSE_ROUTER_FLAVOR: 'expressions' }, 'all').routerFlavor).toBe('expressions');
    expect(readSettings({ GATEHOUSE_ROUTER_FLAVOR: 'traditional' }, 'all').routerFlavor).toBe('traditional');
    expect(() => readSettings({ GATEHOUSE_ROUTER_FLAVOR: 'atc' }, 'all')).toThrow(
      "GATEHOUSE_ROUTER_FLAVOR must be one of traditional, traditional_compatible, expressions, got 'atc'",
    );
  });

  it('gives embedded defaults with nothing set', () => {
    const s = readSettings({}, 'all');
    expect(s.adminListen).toEqual({ host: '127.0.0.1', port: 8001 });
    expect(s.proxyListen).toEqual({ host: '0.0.0.0', port: 8000 });
    expect(s.databaseUrl).toBeNull();
    expect(s.redisUrl).toBeNull();
    expect(s.statusListen).toBeNull();
    expect(s.enforceRbac).toBe('off');
    expect(s.dataDir.endsWith('.gatehouse')).toBe(true);
  });

  it('opens the TLS listener by default: on every address for a data plane, on loopback with start; off disables it', () => {
    expect(readSettings({}, 'data_plane').proxyTlsListen).toEqual({ host: '0.0.0.0', port: 8443 });
    expect(readSettings({}, 'all').proxyTlsListen).toEqual({ host: '127.0.0.1', port: 8443 });
    expect(readSettings({ GATEHOUSE_PROXY_TLS_LISTEN: 'off' }, 'all').proxyTlsListen).toBeNull();
    expect(() => readSettings({ GATEHOUSE_PROXY_TLS_CERT: '/tmp/cert.pem' }, 'all')).toThrow(/GATEHOUSE_PROXY_TLS_KEY/);
  });

  it('opens the status listener by default on a data plane', () => {
    expect(readSettings({}, 'data_plane').statusListen).toEqual({ host: '0.0.0.0', port: 8100 });
  });

  it('rejects malformed values with the variable named', () => {
    expect(() => readSettings({ GATEHOUSE_ENFORCE_RBAC: 'yes' }, 'all')).toThrow(/GATEHOUSE_ENFORCE_RBAC/);
    expect(() => parseListen('8001', 'GATEHOUSE_ADMIN_LISTEN')).toThrow(/host:port/);
    expect(parseListen('[::1]:9000', 'X')).toEqual({ host: '::1', port: 9000 });
  });
});

describe('GATEHOUSE_WORKERS', () => {
  it('defaults to one worker per usable core; takes a whole number from 1 to 256', () => {
    expect(parseWorkers(undefined, () => 6)).toBe(6);
    expect(parseWorkers('', () => 6)).toBe(6);
    expect(parseWorkers('1')).toBe(1);
    expect(parseWorkers(' 4 ')).toBe(4);
    expect(readSettings({ GATEHOUSE_WORKERS: '3' }, 'data_plane').workers).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'many', '257']) expect(() => parseWorkers(bad)).toThrow(`GATEHOUSE_WORKERS must be a whole number from 1 to 256, got '${bad}'`);
  });

  it('counts a container CPU quota, not the machine’s CPUs', () => {
    const files = (entries: Record<string, string>) => (path: string) => {
      if (!(path in entries)) throw new Error('ENOENT');
      return entries[path]!;
    };
    const cpus = availableParallelism();
    expect(usableCores(files({ '/sys/fs/cgroup/cpu.max': 'max 100000\n' }))).toBe(cpus);
    expect(usableCores(files({ '/sys/fs/cgroup/cpu.max': '50000 100000\n' }))).toBe(1);
    expect(usableCores(files({ '/sys/fs/cgroup/cpu.max': `${cpus * 200000} 100000\n` }))).toBe(cpus);
    expect(usableCores(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000' }))).toBe(cpus);
    expect(usableCores(files({}))).toBe(cpus);
  });

  it("reads Kong's tracing_instrumentations and tracing_sampling_rate", () => {
    expect(readSettings({}, 'all').tracing).toEqual({ instrumentations: new Set(), samplingRate: 0.01 });
    const traced = readSettings({ GATEHOUSE_TRACING_INSTRUMENTATIONS: 'router,balancer', GATEHOUSE_TRACING_SAMPLING_RATE: '1' }, 'data_plane').tracing;
    expect([...traced.instrumentations].sort()).toEqual(['balancer', 'request', 'router']);
    expect(traced.samplingRate).toBe(1);
    expect(() => readSettings({ GATEHOUSE_TRACING_INSTRUMENTATIONS: 'all,off' }, 'all')).toThrow('invalid tracing types: off, other types are mutually exclusive');
    expect(() => readSettings({ GATEHOUSE_TRACING_SAMPLING_RATE: '1.5' }, 'all')).toThrow('tracing_sampling_rate must be between 0 and 1');
  });
});

describe('the PROXY protocol settings', () => {
  it('takes real_ip_header = proxy_protocol with a proxy listener that has the flag, and refuses it without', () => {
    expect(readSettings({ GATEHOUSE_REAL_IP_HEADER: 'proxy_protocol', GATEHOUSE_PROXY_LISTEN: '0.0.0.0:8000 proxy_protocol' }, 'data_plane').realIpHeader).toBe('proxy_protocol');
    expect(readSettings({ GATEHOUSE_REAL_IP_HEADER: 'proxy_protocol', GATEHOUSE_PROXY_TLS_LISTEN: '0.0.0.0:8443 proxy_protocol' }, 'all').realIpHeader).toBe('proxy_protocol');
    expect(() => readSettings({ GATEHOUSE_REAL_IP_HEADER: 'proxy_protocol' }, 'data_plane')).toThrow(
      'GATEHOUSE_REAL_IP_HEADER=proxy_protocol needs the proxy_protocol flag on GATEHOUSE_PROXY_LISTEN or GATEHOUSE_PROXY_TLS_LISTEN',
    );
    // a control plane opens no proxy listener
    expect(readSettings({ GATEHOUSE_REAL_IP_HEADER: 'proxy_protocol' }, 'control_plane').realIpHeader).toBe('proxy_protocol');
  });

  it('reads the flag on stream listeners, not with udp', () => {
    expect(readSettings({ GATEHOUSE_STREAM_LISTEN: '127.0.0.1:9000 proxy_protocol, 127.0.0.1:9001 ssl' }, 'data_plane').streamListen).toEqual([
      { host: '127.0.0.1', port: 9000, ssl: false, udp: false, proxyProtocol: true },
      { host: '127.0.0.1', port: 9001, ssl: true, udp: false, proxyProtocol: false },
    ]);
    expect(() => readSettings({ GATEHOUSE_STREAM_LISTEN: '127.0.0.1:9000 udp proxy_protocol' }, 'data_plane')).toThrow('GATEHOUSE_STREAM_LISTEN: proxy_protocol is for TCP listeners, not with udp (127.0.0.1:9000)');
  });
});
