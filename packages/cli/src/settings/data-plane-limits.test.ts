import { describe, expect, it } from '@jest/globals';
import { parseDuration, readSettings } from './index';

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

  it('runs the front lane unless GATEHOUSE_FRONT_LANE is off', () => {
    expect(readSettings({}, 'data_plane').frontLane).toBe(true);
    expect(readSettings({ GATEHOUSE_FRONT_LANE: 'off' }, 'all').frontLane).toBe(false);
  });

  it('refuses values it cannot read', () => {
    expect(() => readSettings({ GATEHOUSE_UNDERSCORE_HEADERS: 'yes' }, 'all')).toThrow(/GATEHOUSE_UNDERSCORE_HEADERS/);
    expect(() => readSettings({ GATEHOUSE_FRONT_LANE: 'fast' }, 'all')).toThrow(/GATEHOUSE_FRONT_LANE/);
    expect(() => readSettings({ GATEHOUSE_MAX_BUFFERED_BODY: '8g' }, 'all')).toThrow(/GATEHOUSE_MAX_BUFFERED_BODY/);
    expect(() => readSettings({ GATEHOUSE_MAX_BUFFERED_BODY: '-1' }, 'all')).toThrow(/GATEHOUSE_MAX_BUFFERED_BODY/);
  });

  it("waits 60 s for request headers and keeps idle connections 60 s by default (Kong's client_header_timeout, keepalive_timeout)", () => {
    const s = readSettings({}, 'data_plane');
    expect([s.clientHeaderTimeout, s.keepaliveTimeout]).toEqual([60_000, 60_000]);
    const short = readSettings({ GATEHOUSE_CLIENT_HEADER_TIMEOUT: '500ms', GATEHOUSE_KEEPALIVE_TIMEOUT: '2' }, 'all');
    expect([short.clientHeaderTimeout, short.keepaliveTimeout]).toEqual([500, 2_000]);
  });

  it('reads durations in nginx syntax and refuses the rest', () => {
    expect(['250ms', '75s', '75', '2m', '1h'].map((v) => parseDuration(v, 'T'))).toEqual([250, 75_000, 75_000, 120_000, 3_600_000]);
    for (const bad of ['0', '0s', '-1s', '1.5s', '1d', 's', '', '999999999h']) expect(() => parseDuration(bad, 'GATEHOUSE_KEEPALIVE_TIMEOUT')).toThrow(/GATEHOUSE_KEEPALIVE_TIMEOUT/);
    expect(() => readSettings({ GATEHOUSE_CLIENT_HEADER_TIMEOUT: 'soon' }, 'all')).toThrow(/GATEHOUSE_CLIENT_HEADER_TIMEOUT/);
  });
});
