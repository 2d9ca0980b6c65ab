import { describe, expect, it } from '@jest/globals';
import { syncStatus } from './clustering';

const plane = { id: 'dp', hostname: 'h', ip: '127.0.0.1', version: '1', config_version: 3, config_hash: 'x', last_seen: 0, ttl: 10, sync_status: 'normal' as const };

describe("data planes' sync_status", () => {
  it('is plugin_set_incompatible when the configuration uses a plugin the data plane lacks', () => {
    expect(syncStatus({ ...plane, plugins: ['key-auth'] }, ['key-auth', 'my-plugin'])).toBe('plugin_set_incompatible');
    expect(syncStatus({ ...plane, plugins: ['key-auth', 'my-plugin'] }, ['my-plugin'])).toBe('normal');
    // a data plane that does not report its plugins is taken at its word
    expect(syncStatus(plane, ['my-plugin'])).toBe('normal');
    expect(syncStatus({ ...plane, sync_status: 'unknown', plugins: [] }, [])).toBe('unknown');
  });
});
