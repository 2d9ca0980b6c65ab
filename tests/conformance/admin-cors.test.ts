import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { parseAdminGuiOrigins } from '@gatehouse/control-plane';
import { startAdmin, type AdminHarness } from './support/admin-harness';

jest.setTimeout(60_000);

/**
 * Decision 14: the admin API answers cross-origin requests only for origins listed in GATEHOUSE_ADMIN_GUI_ORIGINS;
 * any other Origin, `null` included, gets no Access-Control-Allow-* header, on reads, writes and preflights, which
 * decision 27 refuses with 403 (admin-browser-guard.test.ts).
 */
const LISTED = 'https://manager.example.test';
let admin: AdminHarness;
beforeAll(async () => {
  admin = await startAdmin('postgres', { adminGuiOrigins: parseAdminGuiOrigins(`${LISTED}, http://localhost:8002`) });
});
afterAll(async () => {
  await admin?.close();
});
const http = () => admin.http();

function corsHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('access-control-allow-')));
}

describe('a listed origin', () => {
  it('gets its origin echoed with credentials on a read', async () => {
    const res = await http().get('/consumers').set('Origin', LISTED);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(LISTED);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('gets them on a write', async () => {
    const res = await http().post('/consumers').set('Origin', 'http://localhost:8002').send({ username: 'cors-listed' });
    expect(res.status).toBe(201);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:8002');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
  });

  it('passes a preflight', async () => {
    const res = await http()
      .options('/consumers')
      .set('Origin', LISTED)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type, kong-admin-token');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(LISTED);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, OPTIONS');
    expect(res.headers['access-control-allow-headers']).toBe('content-type, kong-admin-token');
  });
});

describe('any other origin', () => {
  const OTHERS = ['https://evil.example.test', 'null', 'https://manager.example.test.evil.test', 'http://manager.example.test', 'file://', 'not an origin'];

  it('gets no Access-Control-Allow-* header on a read', async () => {
    for (const origin of OTHERS) {
      const res = await http().get('/consumers').set('Origin', origin);
      expect([origin, res.status, corsHeaders(res.headers)]).toEqual([origin, 403, {}]);
    }
  });

  it('gets none on a write either, and the write is refused', async () => {
    for (const [i, origin] of OTHERS.entries()) {
      const res = await http().post('/consumers').set('Origin', origin).send({ username: `cors-other-${i}` });
      expect([origin, res.status, corsHeaders(res.headers)]).toEqual([origin, 403, {}]);
      expect((await http().get(`/consumers/cors-other-${i}`)).status).toBe(404);
    }
  });

  it('gets none on a preflight', async () => {
    for (const origin of OTHERS) {
      const res = await http()
        .options('/consumers')
        .set('Origin', origin)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'content-type');
      expect([origin, res.status, corsHeaders(res.headers)]).toEqual([origin, 403, {}]);
    }
  });

  it('a request without Origin gets no CORS header', async () => {
    const res = await http().get('/consumers');
    expect(corsHeaders(res.headers)).toEqual({});
  });
});

describe('GATEHOUSE_ADMIN_GUI_ORIGINS', () => {
  it('is comma-separated origins, empty by default; anything else is refused', () => {
    expect(parseAdminGuiOrigins(undefined)).toEqual([]);
    expect(parseAdminGuiOrigins('')).toEqual([]);
    expect(parseAdminGuiOrigins(' https://A.example.test:443/ , http://b.test:8080')).toEqual(['https://a.example.test', 'http://b.test:8080']);
    expect(() => parseAdminGuiOrigins('null')).toThrow(/not an origin/);
    expect(() => parseAdminGuiOrigins('*')).toThrow(/not an origin/);
  });
});
