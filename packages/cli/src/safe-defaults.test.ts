import { describe, expect, it } from '@jest/globals';
import { isLoopback } from '@gatehouse/control-plane';
import { adminExposureWarning, checkClusterSecret } from './safe-defaults';

describe('checkClusterSecret', () => {
  it('refuses secrets under 32 bytes, counting bytes, not characters', () => {
    expect(() => checkClusterSecret('x')).toThrow(/too short \(1 bytes\): it must be at least 32 bytes/);
    expect(() => checkClusterSecret('a'.repeat(31))).toThrow(/too short/);
    expect(() => checkClusterSecret('a'.repeat(32))).not.toThrow();
    expect(() => checkClusterSecret('é'.repeat(16))).not.toThrow();
    expect(() => checkClusterSecret('é'.repeat(15))).toThrow(/30 bytes/);
  });
});

describe('adminExposureWarning', () => {
  it('warns beyond loopback with RBAC off only', () => {
    expect(adminExposureWarning({ adminListen: { host: '0.0.0.0', port: 8001 }, enforceRbac: 'off' })).toMatch(/0\.0\.0\.0:8001, reachable beyond this machine, with RBAC off/);
    expect(adminExposureWarning({ adminListen: { host: '::', port: 8001 }, enforceRbac: 'off' })).not.toBeNull();
    expect(adminExposureWarning({ adminListen: { host: '10.1.2.3', port: 8001 }, enforceRbac: 'off' })).not.toBeNull();
    expect(adminExposureWarning({ adminListen: { host: '0.0.0.0', port: 8001 }, enforceRbac: 'on' })).toBeNull();
    expect(adminExposureWarning({ adminListen: { host: '127.0.0.1', port: 8001 }, enforceRbac: 'off' })).toBeNull();
  });

  it('knows the loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost', '::ffff:127.0.0.1']) expect([host, isLoopback(host)]).toEqual([host, true]);
    for (const host of ['0.0.0.0', '::', '192.168.1.1', 'example.test', '::ffff:10.0.0.1']) expect([host, isLoopback(host)]).toEqual([host, false]);
  });
});
