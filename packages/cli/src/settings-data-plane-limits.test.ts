import { describe, expect, it } from '@jest/globals';
import { readSettings } from './settings';

describe('data-plane hardening settings', () => {
  it('drops underscore headers and buffers at most 8 MiB by default', () => {
    const s = readSettings({}, 'data_plane');
    expect(s.underscoreHeaders).toBe(false);
    expect(s.maxBufferedBody).toBe(8 * 1024 * 1024);
  });

  it('reads GATEHOUSE_UNDERSCORE_HEADERS and GATEHOUSE_MAX_BUFFERED_BODY', () => {
    expect(readSettings({ GATEHOUSE_UNDERSCORE_HEADERS: 'on' }, 'all').underscoreHeaders).toBe(true);
    expect(readSettings({ GATEHOUSE_MAX_BUFFERED_BODY: '512k' }, 'all').maxBufferedBody).toBe(512 * 1024);
    expect(readSettings({ GATEHOUSE_MAX_BUFFERED_BODY: '2M' }, 'all').maxBufferedBody).toBe(2 * 1024 * 1024);
    expect(readSettings({ GATEHOUSE_MAX_BUFFERED_BODY: '1000' }, 'all').maxBufferedBody).toBe(1000);
  });

  it('refuses values it cannot read', () => {
    expect(() => readSettings({ GATEHOUSE_UNDERSCORE_HEADERS: 'yes' }, 'all')).toThrow(/GATEHOUSE_UNDERSCORE_HEADERS/);
    expect(() => readSettings({ GATEHOUSE_MAX_BUFFERED_BODY: '8g' }, 'all')).toThrow(/GATEHOUSE_MAX_BUFFERED_BODY/);
    expect(() => readSettings({ GATEHOUSE_MAX_BUFFERED_BODY: '-1' }, 'all')).toThrow(/GATEHOUSE_MAX_BUFFERED_BODY/);
  });
});
