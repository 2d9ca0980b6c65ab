// The observability plugins through the admin API: Kong's error shape for bad configs, defaults filled, /schemas.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createAdminApp, openDatabase, type AdminApp, type Database } from '../src';

describe('observability plugins on the admin API (PGlite)', () => {
  let database: Database;
  let app: AdminApp;

  beforeAll(async () => {
    database = await openDatabase({});
    app = createAdminApp({ database });
  }, 60_000);

  afterAll(async () => {
    await database?.close();
  });

  it('creates them with Kong\'s defaults', async () => {
    const prometheus = await request(app).post('/plugins').send({ name: 'prometheus', config: { status_code_metrics: true } });
    expect(prometheus.status).toBe(201);
    expect(prometheus.body.config).toEqual({ per_consumer: false, status_code_metrics: true, latency_metrics: false, bandwidth_metrics: false, upstream_health_metrics: false, ai_metrics: false });
    const http = await request(app).post('/plugins').type('form').send('name=http-log&config.http_endpoint=http://collector:9000/logs&config.queue.max_batch_size=50');
    expect(http.status).toBe(201);
    expect(http.body.config).toMatchObject({ method: 'POST', content_type: 'application/json', timeout: 10000, keepalive: 60000 });
    expect(http.body.config.queue).toMatchObject({ max_batch_size: 50, max_coalescing_delay: 1, max_entries: 10000, initial_retry_delay: 0.01, max_retry_delay: 60, max_retry_time: 60 });
  });

  it('answers 400 in Kong\'s shape for configs it cannot run', async () => {
    // custom_fields_by_lua runs in the Lua sandbox: a chunk that does not parse is refused when the plugin is created
    const lua = await request(app).post('/plugins').send({ name: 'file-log', config: { path: '/tmp/x.log', custom_fields_by_lua: { f: 'return (' } } });
    expect(lua.status).toBe(400);
    expect(lua.body).toMatchObject({ code: 2, name: 'schema violation' });
    expect(JSON.stringify(lua.body.fields.config.custom_fields_by_lua)).toContain('Error parsing function:');
    const path = await request(app).post('/plugins').send({ name: 'file-log', config: { path: '/tmp/*.log' } });
    expect(path.status).toBe(400);
    expect(path.body.fields).toEqual({ config: { path: 'not a valid filename' } });
    const generator = await request(app).post('/plugins').send({ name: 'correlation-id', config: { generator: 'nope' } });
    expect(generator.status).toBe(400);
    expect(generator.body.fields).toEqual({ config: { generator: 'expected one of: uuid, uuid#counter, tracker' } });
    const endpoint = await request(app).post('/plugins').send({ name: 'http-log', config: { http_endpoint: 'nope' } });
    expect(endpoint.status).toBe(400);
    expect(endpoint.body.fields).toEqual({ config: { http_endpoint: 'missing host in url' } });
  });

  it('describes them on /schemas/plugins/{name}', async () => {
    for (const name of ['prometheus', 'correlation-id', 'file-log', 'http-log']) {
      const res = await request(app).get(`/schemas/plugins/${name}`);
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).toContain('"config"');
    }
  });
});
