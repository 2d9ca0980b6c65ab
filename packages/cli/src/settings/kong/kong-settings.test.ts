import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSettings } from '../index';
import { confPathOf, runCheckCommand, startRole } from './cli';
import { applyKongSettings, convertKongValues, parseKongConf } from './index';
import { kongEnvironment } from './sources';

/** folders a test made, removed after it */
const made: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const conf = (text: string) => parseKongConf(text, 'kong.conf');

describe('kong.conf parsing', () => {
  it('reads name = value lines, skips comments and blank lines, keeps escaped #', () => {
    const values = conf('# a comment\n\nlog_level = debug   # trailing\nPG_PASSWORD = pa\\#ss\nheaders=off\n');
    expect([...values].map(([k, v]) => [k, v.value])).toEqual([
      ['log_level', 'debug'],
      ['pg_password', 'pa#ss'],
      ['headers', 'off'],
    ]);
    expect(values.get('headers')?.from).toBe('kong.conf:5');
  });

  it('refuses a line that is not name = value, naming the line', () => {
    expect(() => conf('log_level = info\nthis is wrong\n')).toThrow('kong.conf:2');
  });
});

describe('KONG_* environment', () => {
  it('reads KONG_<NAME> and KONG_<NAME>_FILE (the Docker image convention)', () => {
    const dir = tempDir('kong-env-');
    writeFileSync(join(dir, 'pw'), 's3cret\n');
    const values = kongEnvironment({ KONG_PG_HOST: 'db', KONG_PG_PASSWORD_FILE: join(dir, 'pw'), OTHER: 'x' });
    expect(values.get('pg_host')?.value).toBe('db');
    expect(values.get('pg_password')).toEqual({ value: 's3cret', from: 'KONG_PG_PASSWORD_FILE' });
    expect(values.has('other')).toBe(false);
  });
});

describe('Kong names → Gatehouse settings', () => {
  it("maps Kong's docker-compose defaults onto a Gatehouse start", () => {
    const { env } = applyKongSettings(
      {
        KONG_DATABASE: 'postgres',
        KONG_PG_HOST: 'db',
        KONG_PG_USER: 'kong',
        KONG_PG_PASSWORD: 'p@ss word',
        KONG_PROXY_LISTEN: '0.0.0.0:8000, 0.0.0.0:8443 ssl',
        KONG_ADMIN_LISTEN: '0.0.0.0:8001, 0.0.0.0:8444 ssl',
        KONG_PROXY_ACCESS_LOG: '/dev/stdout',
        KONG_PREFIX: '/var/run/kong',
      },
      null,
    );
    expect(env.DATABASE_URL).toBe('postgres://kong:p%40ss%20word@db:5432/kong');
    expect(env.GATEHOUSE_DATABASE).toBe('postgres');
    const s = readSettings(env, 'all');
    expect(s.proxyListen).toEqual({ host: '0.0.0.0', port: 8000 });
    expect(s.proxyTlsListen).toEqual({ host: '0.0.0.0', port: 8443 });
    expect(s.adminListen).toEqual({ host: '0.0.0.0', port: 8001 });
    expect(s.accessLog).toBe('stdout');
    expect(s.dataDir).toBe('/var/run/kong');
  });

  it("maps Kong's router_flavor onto GATEHOUSE_ROUTER_FLAVOR", () => {
    expect(readSettings(applyKongSettings({ KONG_ROUTER_FLAVOR: 'expressions' }, null).env, 'all').routerFlavor).toBe('expressions');
    expect(readSettings(applyKongSettings({ KONG_ROUTER_FLAVOR: 'expressions', GATEHOUSE_ROUTER_FLAVOR: 'traditional_compatible' }, null).env, 'all').routerFlavor).toBe(
      'traditional_compatible',
    );
  });

  it('lets GATEHOUSE_* win over KONG_*, and KONG_* over the file', () => {
    const dir = tempDir('kong-conf-');
    const path = join(dir, 'kong.conf');
    writeFileSync(path, 'log_level = error\nadmin_listen = 127.0.0.1:9001\nproxy_listen = 127.0.0.1:9000\n');
    const { env } = applyKongSettings({ KONG_LOG_LEVEL: 'notice', GATEHOUSE_PROXY_LISTEN: '127.0.0.1:7000' }, path);
    expect(env.GATEHOUSE_LOG_LEVEL).toBe('info');
    expect(env.GATEHOUSE_ADMIN_LISTEN).toBe('127.0.0.1:9001');
    expect(env.GATEHOUSE_PROXY_LISTEN).toBe('127.0.0.1:7000');
    expect(env.GATEHOUSE_PROXY_TLS_LISTEN).toBe('off');
  });

  it('converts values: role, workers, booleans, pg_ssl, admin_gui_url, trusted_ips', () => {
    const { env, notices } = convertKongValues(
      conf(
        [
          'role = traditional',
          'nginx_worker_processes = 3',
          'real_ip_recursive = on',
          'database = postgres',
          'pg_ssl = on',
          'pg_schema = gh',
          'admin_gui_url = https://manager.example.com/path, http://localhost:8002',
          'trusted_ips = 10.0.0.0/8,unix:',
          'declarative_config = /etc/kong/kong.yml',
          'stream_listen = 0.0.0.0:5555 udp',
          'untrusted_lua = sandbox',
          'plugins = bundled,my-plugin',
        ].join('\n'),
      ),
    );
    expect(env).toMatchObject({
      GATEHOUSE_ROLE: 'all',
      GATEHOUSE_WORKERS: '3',
      GATEHOUSE_REAL_IP_RECURSIVE: 'on',
      GATEHOUSE_ADMIN_GUI_ORIGINS: 'https://manager.example.com,http://localhost:8002',
      GATEHOUSE_TRUSTED_IPS: '10.0.0.0/8',
      GATEHOUSE_DECLARATIVE_CONFIG: '/etc/kong/kong.yml',
      GATEHOUSE_STREAM_LISTEN: '0.0.0.0:5555 udp',
      GATEHOUSE_UNTRUSTED_LUA: 'sandbox',
      GATEHOUSE_PLUGINS: 'bundled,my-plugin',
    });
    expect(new URL(env.DATABASE_URL!).searchParams.get('sslmode')).toBe('no-verify');
    expect(new URL(env.DATABASE_URL!).searchParams.get('options')).toBe('-c search_path=gh');
    expect(notices.map((n) => n.name)).toEqual(['trusted_ips']);
  });

  it('opens the admin API over TLS when admin_listen has only ssl entries (Helm)', () => {
    const { env } = convertKongValues(conf('admin_listen = 0.0.0.0:8444 http2 ssl\nadmin_ssl_cert = /c.pem\nadmin_ssl_cert_key = /k.pem'));
    expect(env).toMatchObject({ GATEHOUSE_ADMIN_LISTEN: '0.0.0.0:8444 http2 ssl', GATEHOUSE_ADMIN_TLS_CERT: '/c.pem', GATEHOUSE_ADMIN_TLS_KEY: '/k.pem' });
    expect(readSettings(env, 'control_plane').adminListen.flags?.ssl).toBe(true);
  });

  it('maps database = off onto GATEHOUSE_DATABASE', () => {
    expect(convertKongValues(conf('database = off')).env).toEqual({ GATEHOUSE_DATABASE: 'off' });
  });

  it('notes each unknown or inapplicable name once, with where it came from', () => {
    const { notices } = convertKongValues(conf('mem_cache_size = 128m\ncluster_cert = /c.pem\nnot_a_setting = 1\nnginx_http_gzip = on'));
    expect(notices).toEqual([
      { name: 'mem_cache_size', from: 'kong.conf:1', reason: expect.stringContaining('not applied') },
      { name: 'cluster_cert', from: 'kong.conf:2', reason: expect.stringContaining('REDIS_URL') },
      { name: 'not_a_setting', from: 'kong.conf:3', reason: 'not a Kong 3.9 setting' },
      { name: 'nginx_http_gzip', from: 'kong.conf:4', reason: expect.stringContaining('nginx') },
    ]);
  });

  it('refuses bad values naming the setting and its source', () => {
    expect(() => convertKongValues(conf('log_level = loud'))).toThrow(/log_level .*kong\.conf:1/);
    expect(() => convertKongValues(conf('database = cassandra'))).toThrow(/database has an invalid value/);
    expect(() => convertKongValues(conf('proxy_listen = 0.0.0.0:8000 fancy'))).toThrow(/unknown flag 'fancy'/);
    expect(() => convertKongValues(conf('role = leader'))).toThrow(/role has an invalid value/);
  });
});

describe('listener flags', () => {
  it("parses Kong's flags on a Gatehouse listener and keeps extra entries out", () => {
    const { env, notices } = convertKongValues(conf('proxy_listen = 0.0.0.0:8000 reuseport backlog=16384, 0.0.0.0:8443 http2 ssl reuseport backlog=16384, 0.0.0.0:9000'));
    expect(env.GATEHOUSE_PROXY_LISTEN).toBe('0.0.0.0:8000 reuseport backlog=16384');
    expect(env.GATEHOUSE_PROXY_TLS_LISTEN).toBe('0.0.0.0:8443 http2 reuseport backlog=16384');
    expect(notices[0]?.reason).toContain('0.0.0.0:9000');
    const s = readSettings(env, 'all');
    expect(s.proxyListen.flags).toMatchObject({ reuseport: true, backlog: 16384, ssl: false });
    expect(s.proxyTlsListen?.flags).toMatchObject({ http2: true, backlog: 16384 });
  });
});

describe('command line', () => {
  it('finds --conf, -c and GATEHOUSE_CONF', () => {
    expect(confPathOf(['--conf', 'a.conf'], {})).toBe('a.conf');
    expect(confPathOf(['--conf=b.conf'], {})).toBe('b.conf');
    expect(confPathOf(['-c', 'c.conf'], { GATEHOUSE_CONF: 'd.conf' })).toBe('c.conf');
    expect(confPathOf([], { GATEHOUSE_CONF: 'd.conf' })).toBe('d.conf');
    expect(confPathOf([], {})).toBeNull();
  });

  it("start takes Kong's role", () => {
    expect(startRole({})).toBe('all');
    expect(startRole({ GATEHOUSE_ROLE: 'data_plane' })).toBe('data_plane');
    expect(() => startRole({ GATEHOUSE_ROLE: 'x' })).toThrow(/GATEHOUSE_ROLE/);
  });

  it('gatehouse check validates a kong.conf', () => {
    const dir = tempDir('kong-check-');
    const good = join(dir, 'good.conf');
    const bad = join(dir, 'bad.conf');
    writeFileSync(good, 'admin_listen = 127.0.0.1:8001\nanonymous_reports = off\n');
    writeFileSync(bad, 'admin_listen = 127.0.0.1:99999\n');
    const out: string[] = [];
    const err: string[] = [];
    const io = { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), env: {} };
    expect(runCheckCommand([good], io)).toBe(0);
    expect(out.join('')).toBe(`configuration at ${good} is valid\n`);
    expect(err.join('')).toContain("'anonymous_reports'");
    expect(runCheckCommand([bad], io)).toBe(1);
    expect(err.join('')).toContain('port out of range');
    expect(runCheckCommand([join(dir, 'missing.conf')], io)).toBe(1);
  });
});
