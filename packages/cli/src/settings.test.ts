import { describe, expect, it } from '@jest/globals';
import { parseListen, readSettings } from './settings';

describe('readSettings', () => {
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
