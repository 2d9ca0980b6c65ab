import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createAdminApp, openDatabase, parseListen, startAdminServer, type AdminServer, type Database } from '../src';

// database start-up (PGlite's first initdb, Postgres under load) can take longer than jest's default 5 s
jest.setTimeout(60_000);

describe('admin server', () => {
  let database: Database;
  let server: AdminServer;
  beforeAll(async () => {
    database = await openDatabase({});
    const app = createAdminApp({ database, statusExtras: () => ({ configuration_hash: 'f'.repeat(32) }) });
    server = await startAdminServer(app, '127.0.0.1:0');
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('parses listen addresses', () => {
    expect(parseListen('127.0.0.1:8001')).toEqual({ host: '127.0.0.1', port: 8001 });
    expect(parseListen('0.0.0.0:8000')).toEqual({ host: '0.0.0.0', port: 8000 });
    expect(parseListen('[::1]:8001')).toEqual({ host: '::1', port: 8001 });
    expect(parseListen('8001')).toEqual({ host: '127.0.0.1', port: 8001 });
    expect(() => parseListen('nowhere')).toThrow(/invalid listen address/);
  });

  it('serves over HTTP, counts requests and merges the status extras', async () => {
    const base = `http://127.0.0.1:${server.port}`;
    await fetch(`${base}/`);
    const res = await fetch(`${base}/status`);
    const status = (await res.json()) as Record<string, any>;
    expect(status.database).toEqual({ reachable: true });
    expect(status.configuration_hash).toBe('f'.repeat(32));
    expect(status.server.total_requests).toBeGreaterThanOrEqual(2);
    expect(status.server.connections_accepted).toBeGreaterThanOrEqual(1);
    expect(status.warnings).toEqual([]);
  });

  it('reports a config.anonymous naming no consumer as a warning', async () => {
    const base = `http://127.0.0.1:${server.port}`;
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await post('/consumers', { username: 'anon' });
    const byName = (await (await post('/plugins', { name: 'key-auth', config: { anonymous: 'anon' } })).json()) as { id: string };
    const missing = '6b1e2d3c-4f5a-4b6c-8d7e-9f0a1b2c3d4e';
    const dangling = (await (await post('/plugins', { name: 'basic-auth', config: { anonymous: missing } })).json()) as { id: string };
    const status = (await (await fetch(`${base}/status`)).json()) as Record<string, any>;
    expect(status.warnings.map((w: { id: string }) => w.id)).toEqual([dangling.id]);
    expect(status.warnings[0]).toMatchObject({ entity: 'plugins', field: 'config.anonymous', value: missing });
    expect(byName.id).toBeTruthy();
  });
});
