import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { servesFileAlone } from '../bus';
import { readSettings } from './index';

describe('GATEHOUSE_DATABASE and GATEHOUSE_DECLARATIVE_CONFIG', () => {
  it('defaults to postgres with DATABASE_URL, else embedded', () => {
    expect(readSettings({}, 'all').database).toBe('embedded');
    expect(readSettings({ DATABASE_URL: 'postgres://db/x' }, 'control_plane').database).toBe('postgres');
  });

  it('off takes a declarative file, resolved to an absolute path', () => {
    const s = readSettings({ GATEHOUSE_DATABASE: 'off', GATEHOUSE_DECLARATIVE_CONFIG: 'kong.yml' }, 'all');
    expect(s).toMatchObject({ database: 'off', declarativeConfig: resolve('kong.yml') });
  });

  it('refuses what cannot work, naming the variable', () => {
    expect(() => readSettings({ GATEHOUSE_DATABASE: 'mysql' }, 'all')).toThrow(/GATEHOUSE_DATABASE/);
    expect(() => readSettings({ GATEHOUSE_DATABASE: 'postgres' }, 'all')).toThrow(/DATABASE_URL/);
    expect(() => readSettings({ GATEHOUSE_DECLARATIVE_CONFIG: 'kong.yml' }, 'all')).toThrow(/GATEHOUSE_DATABASE=off/);
    expect(() => readSettings({ GATEHOUSE_DECLARATIVE_CONFIG: 'kong.yml' }, 'data_plane')).toThrow(/GATEHOUSE_DATABASE=off/);
    // an admin API without a database cannot enforce RBAC: refused rather than left open
    expect(() => readSettings({ GATEHOUSE_DATABASE: 'off', GATEHOUSE_ENFORCE_RBAC: 'on' }, 'all')).toThrow(/GATEHOUSE_ENFORCE_RBAC needs a database/);
  });

  it('a data plane with a file and the database off serves it alone; without a file it follows the bus', () => {
    expect(servesFileAlone(readSettings({ GATEHOUSE_DATABASE: 'off', GATEHOUSE_DECLARATIVE_CONFIG: 'kong.yml' }, 'data_plane'))).toBe(true);
    expect(servesFileAlone(readSettings({ GATEHOUSE_DATABASE: 'off' }, 'data_plane'))).toBe(false);
    expect(servesFileAlone(readSettings({ GATEHOUSE_DATABASE: 'off', GATEHOUSE_DECLARATIVE_CONFIG: 'kong.yml' }, 'all'))).toBe(false);
  });
});
