// Kong's own declarative tool, decK (Debian's `deck` package), against the admin API: ping, dump, diff with no
// changes right after a dump, sync of an edited file, validate, select-tag and reset. The admin API runs on a real
// listener over a throwaway Postgres database.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { keyMigrations, keyringFromSecret, keysExtension, tlsExtension, tlsMigrations } from '@gatehouse/control-plane';
import { startAdmin, type AdminHarness } from '../conformance/support/admin-harness';
import { CertificateFactory } from '../support/certificates';

jest.setTimeout(120_000);

const DECK = process.env.DECK_BINARY ?? '/usr/bin/deck';

interface Run {
  code: number;
  out: string;
}

function deck(args: string[], adminUrl: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(DECK, [...args, '--kong-addr', adminUrl, '--no-color'], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new Error(`decK is not installed at ${DECK} (Debian package 'deck'; .ci/run installs it)`));
        return;
      }
      const code = err ? Number((err as { code?: unknown }).code ?? 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

describe('decK against the admin API', () => {
  let h: AdminHarness;
  let server: Server;
  let adminUrl: string;
  let dir: string;
  const certificates = new CertificateFactory();

  beforeAll(async () => {
    const keyring = keyringFromSecret('deck-test-keyring-secret-0123456789abcdef');
    h = await startAdmin('postgres', { log: () => {}, extensions: [keysExtension(keyring), tlsExtension(keyring)] }, { ...keyMigrations(), ...tlsMigrations() });
    server = createServer(h.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    adminUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-deck-'));
    const http = h.http;
    const service = (await http().post('/services').send({ name: 'orders', url: 'http://orders.internal:8080/api', tags: ['team-a'] })).body;
    await http().post(`/services/${service.id}/routes`).send({ name: 'orders-route', paths: ['/orders'], tags: ['team-a'] });
    await http().post('/services/orders/plugins').send({ name: 'key-auth', tags: ['team-a'] });
    await http().post('/consumers').send({ username: 'alice', tags: ['team-a'] });
    await http().post('/consumers/alice/key-auth').send({ key: 'alice-key', tags: ['team-a'] });
    await http().post('/consumers/alice/acls').send({ group: 'gold', tags: ['team-a'] });
    await http().post('/consumers').send({ username: 'bob', tags: ['team-b'] });
    await http().post('/upstreams').send({ name: 'orders.upstream', tags: ['team-a'] });
    await http().post('/upstreams/orders.upstream/targets').send({ target: '10.0.0.1:8080', weight: 50, tags: ['team-a'] });
    const ca = certificates.ca('decK Test CA');
    const leaf = certificates.signed(ca, ['orders.example.test']);
    const cert = (await http().post('/certificates').send({ cert: leaf.cert, key: leaf.key, tags: ['team-a'] })).body;
    await http().post(`/certificates/${cert.id}/snis`).send({ name: 'orders.example.test', tags: ['team-a'] });
    await http().post('/ca_certificates').send({ cert: ca.cert, tags: ['team-a'] });
  });
  afterAll(async () => {
    certificates.cleanup();
    await new Promise((r) => server?.close(r));
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ping reports the Kong version the admin API announces', async () => {
    const run = await deck(['ping'], adminUrl);
    expect(run.code).toBe(0);
    expect(run.out).toContain('Kong version:  3.9.0');
  });

  it('dump writes every entity, and diff right after it finds no changes', async () => {
    const file = join(dir, 'kong.yaml');
    const dumped = await deck(['dump', '-o', file], adminUrl);
    expect([dumped.code, dumped.out]).toEqual([0, '']);
    const doc = parseYaml(readFileSync(file, 'utf8')) as Record<string, Array<Record<string, unknown>>>;
    expect(doc.services!.map((s) => s.name)).toEqual(['orders']);
    expect((doc.services![0]!.routes as Array<{ name: string }>).map((r) => r.name)).toEqual(['orders-route']);
    expect(doc.consumers!.map((c) => c.username).sort()).toEqual(['alice', 'bob']);
    expect(doc.upstreams!.map((u) => u.name)).toEqual(['orders.upstream']);
    expect((doc.upstreams![0]!.targets as Array<{ target: string }>).map((t) => t.target)).toEqual(['10.0.0.1:8080']);
    expect(doc.certificates!.length).toBe(1);
    expect((doc.certificates![0]!.snis as Array<{ name: string }>).map((n) => n.name)).toEqual(['orders.example.test']);
    expect(doc.ca_certificates!.length).toBe(1);

    const diff = await deck(['diff', '-s', file], adminUrl);
    expect(diff.code).toBe(0);
    expect(diff.out).toContain('Created: 0');
    expect(diff.out).toContain('Updated: 0');
    expect(diff.out).toContain('Deleted: 0');

    const validate = await deck(['validate', '-s', file], adminUrl);
    expect(validate.code).toBe(0);
  });

  it('sync of an edited file writes the change through the admin API, and diff then finds none', async () => {
    const file = join(dir, 'kong.yaml');
    const doc = parseYaml(readFileSync(file, 'utf8')) as Record<string, Array<Record<string, unknown>>>;
    (doc.services![0]!.routes as Array<Record<string, unknown>>)[0]!.paths = ['/orders', '/v2/orders'];
    doc.consumers!.push({ username: 'carol' });
    writeFileSync(file, toYaml(doc));
    const sync = await deck(['sync', '-s', file], adminUrl);
    expect(sync.code).toBe(0);
    expect(sync.out).toContain('Created: 1');
    expect(sync.out).toContain('Updated: 1');
    expect((await h.http().get('/routes/orders-route')).body.paths).toEqual(['/orders', '/v2/orders']);
    expect((await h.http().get('/consumers/carol')).status).toBe(200);
    const diff = await deck(['diff', '-s', file], adminUrl);
    expect(diff.out).toContain('Created: 0');
    expect(diff.out).toContain('Updated: 0');
    expect(diff.out).toContain('Deleted: 0');
  });

  it('--select-tag dumps and syncs only the tagged entities', async () => {
    const file = join(dir, 'team-b.yaml');
    expect((await deck(['dump', '-o', file, '--select-tag', 'team-b'], adminUrl)).code).toBe(0);
    const doc = parseYaml(readFileSync(file, 'utf8')) as Record<string, Array<Record<string, unknown>>>;
    expect(doc.consumers!.map((c) => c.username)).toEqual(['bob']);
    expect(doc.services).toBeUndefined();
    doc.consumers!.push({ username: 'dave', tags: ['team-b'] });
    writeFileSync(file, toYaml(doc));
    const sync = await deck(['sync', '-s', file, '--select-tag', 'team-b'], adminUrl);
    expect(sync.code).toBe(0);
    expect((await h.http().get('/consumers/dave')).body.tags).toEqual(['team-b']);
    expect((await h.http().get('/consumers/alice')).status).toBe(200);
  });

  it('reset deletes everything', async () => {
    const reset = await deck(['reset', '--force'], adminUrl);
    expect(reset.code).toBe(0);
    for (const path of ['/services', '/routes', '/consumers', '/plugins', '/upstreams', '/key-auths', '/certificates', '/snis', '/ca_certificates']) {
      expect([path, (await h.http().get(path)).body.data]).toEqual([path, []]);
    }
  });
});
