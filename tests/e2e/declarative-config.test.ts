// `gatehouse config dump|validate|diff|apply` against the real gatehouse processes in both topologies: a document
// applied through the CLI is served by every data plane, diff exits non-zero exactly when there are changes, and
// --select-tag manages the tagged entities only.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { stringify as toYaml } from 'yaml';
import { gatehouseNodeArgs, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { adminClient, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';
import { basicAuth } from './support/helpers';
import { runConfigCommand } from '../../packages/cli/src/config-command';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function gatehouseConfig(args: string[], adminUrl: string): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, gatehouseNodeArgs('config', ...args, '--admin-url', adminUrl, '--no-progress'), { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

// each case runs the real command several times (a Node process each)
jest.setTimeout(180_000);

describe.each(TOPOLOGIES)('gatehouse config against the admin API (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-cli-'));
    file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      toYaml({
        _format_version: '3.0',
        services: [{ name: 'echo', url: upstream.url, routes: [{ name: 'echo-route', paths: ['/decl'], plugins: [{ name: 'key-auth' }] }] }],
        consumers: [{ username: 'alice', keyauth_credentials: [{ key: 'alice-decl-key' }] }],
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await topology?.stop();
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('validate checks a document offline: a valid one passes, a broken one names the entity and field', async () => {
    const valid = await gatehouseConfig(['validate', file], 'http://127.0.0.1:9');
    expect([valid.code, valid.stdout]).toEqual([0, `${file}: valid\n`]);
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, toYaml({ _format_version: '3.0', routes: [{ name: 'orphan', paths: ['/o'], service: 'nowhere' }], services: [{ name: 'bad', host: 'x', port: 'eighty' }] }));
    const result = await gatehouseConfig(['validate', broken], 'http://127.0.0.1:9');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("service 'bad'");
    expect(result.stderr).toContain('port: expected an integer');
    expect(result.stderr).toContain("route 'orphan'");
  });

  it('diff shows what apply would do and exits 1; apply writes it and every data plane serves it; diff then exits 0', async () => {
    const before = await gatehouseConfig(['diff', file], topology.adminUrl);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('+ create services echo');
    expect(before.stdout).toContain('+ create consumers alice');

    const dry = await gatehouseConfig(['apply', file, '--dry-run'], topology.adminUrl);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('(dry run: nothing was written)');
    expect((await adminClient(topology.adminUrl).get('/services')).body.data).toEqual([]);

    const applied = await gatehouseConfig(['apply', file], topology.adminUrl);
    expect([applied.code, applied.stderr]).toEqual([0, '']);
    expect(applied.stdout).toMatch(/^applied in [\d.]+ s: 1 services, 1 routes, 1 consumers, 1 keyauth_credentials, 1 plugins\n$/);

    for (const dp of topology.dataPlanes) {
      const ok = await until(() => proxied(`${dp.proxyUrl}/decl`, { headers: { apikey: 'alice-decl-key' } }), (r) => r.status === 200);
      expect(ok.status).toBe(200);
      expect(ok.body.headers['x-consumer-username']).toBe('alice');
      expect((await proxied(`${dp.proxyUrl}/decl`, { headers: { apikey: 'wrong' } })).status).toBe(401);
    }

    const after = await gatehouseConfig(['diff', file], topology.adminUrl);
    expect([after.code, after.stdout]).toEqual([0, 'Summary: 0 created, 0 updated, 0 deleted\n']);
    const again = await gatehouseConfig(['apply', file], topology.adminUrl);
    expect([again.code, again.stdout]).toEqual([0, 'no changes: the configuration already matches the document\n']);
  });

  it('dump writes the configuration as the admin API gives it (YAML, or JSON by file name)', async () => {
    const out = join(dir, 'dump.yaml');
    const result = await gatehouseConfig(['dump', '-o', out], topology.adminUrl);
    expect(result.code).toBe(0);
    const served = await fetch(`${topology.adminUrl}/config?format=yaml`).then((r) => r.text());
    expect(readFileSync(out, 'utf8')).toBe(served);
    const json = join(dir, 'dump.json');
    expect((await gatehouseConfig(['dump', '-o', json], topology.adminUrl)).code).toBe(0);
    expect(JSON.parse(readFileSync(json, 'utf8'))).toEqual(await fetch(`${topology.adminUrl}/config`).then((r) => r.json()));
  });

  it('--select-tag manages only the tagged entities and leaves the rest alone', async () => {
    const teamB = join(dir, 'team-b.yaml');
    writeFileSync(teamB, toYaml({ _format_version: '3.0', consumers: [{ username: 'bob' }, { username: 'carol' }] }));
    expect((await gatehouseConfig(['apply', teamB, '--select-tag', 'team-b'], topology.adminUrl)).code).toBe(0);
    const admin = adminClient(topology.adminUrl);
    expect((await admin.get('/consumers/bob')).body.tags).toEqual(['team-b']);
    expect((await admin.get('/consumers/alice')).status).toBe(200);

    const dumped = await gatehouseConfig(['dump', '--format', 'json', '--select-tag', 'team-b'], topology.adminUrl);
    const doc = JSON.parse(dumped.stdout) as { consumers: Array<{ username: string }>; services?: unknown };
    expect(doc.consumers.map((c) => c.username).sort()).toEqual(['bob', 'carol']);
    expect(doc.services).toBeUndefined();

    writeFileSync(teamB, toYaml({ _format_version: '3.0', consumers: [{ username: 'bob' }] }));
    const diff = await gatehouseConfig(['diff', teamB, '--select-tag', 'team-b'], topology.adminUrl);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('- delete consumers carol');
    expect(diff.stdout).not.toContain('alice');
    expect((await gatehouseConfig(['apply', teamB, '--select-tag', 'team-b'], topology.adminUrl)).code).toBe(0);
    expect((await admin.get('/consumers/carol')).status).toBe(404);
    expect((await admin.get('/consumers/alice')).status).toBe(200);
    expect((await gatehouseConfig(['diff', file], topology.adminUrl)).stdout).toContain('- delete consumers bob');
  });

  // decK's test data: documents Kong 3.9 accepts, imported through POST /config as a new user would
  it('a Kong dump imports as Kong 3.9 reads it (_transform false digests, 1.1 regex paths, shorthand fields, hex ids)', async () => {
    const consumer = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
    const dump = {
      _format_version: '1.1',
      _transform: false,
      services: [
        {
          id: '00000000-0000-0000-0000-000000000001',
          name: 'kong-dump',
          url: upstream.url,
          _comment: 'exported from Kong',
          routes: [{ name: 'users', paths: ['/dump/users/\\d+'], plugins: [{ name: 'basic-auth' }, { name: 'rate-limiting', config: { minute: 1000, redis_host: null, redis_port: 6379, redis_timeout: 2000 } }] }],
        },
      ],
      // SHA-1 of the password followed by the consumer id: what Kong stores and exports
      consumers: [{ id: consumer, username: 'kong-user', basicauth_credentials: [{ username: 'kong-user', password: createHash('sha1').update(`kong-password${consumer}`).digest('hex') }] }],
    };
    const imported = await jsonAdmin(topology.adminUrl, 'POST', '/config', dump);
    expect(imported.status).toBe(201);
    await topology.converge();
    const login = { headers: { authorization: basicAuth('kong-user', 'kong-password') } };
    expect((await proxied(`${topology.proxyUrl}/dump/users/42`, login)).status).toBe(200);
    expect((await proxied(`${topology.proxyUrl}/dump/users/42`, { headers: { authorization: basicAuth('kong-user', 'wrong') } })).status).toBe(401);
    // a regex path, not the literal prefix `/dump/users/\d+`: other paths under /dump/users are not this route's
    expect((await proxied(`${topology.proxyUrl}/dump/users/abc`, login)).status).toBe(404);

    // a document with the password in clear, pushed again with check_hash: nothing changed, 304, no new hash
    const plain = { _format_version: '3.0', consumers: [{ username: 'plain-user', basicauth_credentials: [{ username: 'plain-user', password: 'pw' }] }] };
    expect((await jsonAdmin(topology.adminUrl, 'POST', '/config', plain)).status).toBe(201);
    const stored = (await jsonAdmin(topology.adminUrl, 'GET', '/consumers/plain-user/basic-auth')).body.data[0].password;
    expect((await jsonAdmin(topology.adminUrl, 'POST', '/config?check_hash=1', plain)).status).toBe(304);
    expect((await jsonAdmin(topology.adminUrl, 'POST', '/config', plain)).status).toBe(201);
    expect((await jsonAdmin(topology.adminUrl, 'GET', '/consumers/plain-user/basic-auth')).body.data[0].password).toBe(stored);
  });

  // Kong's `kong config parse | db_import | db_export`, run in this process (the command's code, not a new Node)
  it("Kong's verbs: parse checks offline, db_import adds to what is there, db_export never overwrites", async () => {
    const run = async (args: string[]) => {
      const out = { stdout: '', stderr: '' };
      const code = await runConfigCommand([...args, '--admin-url', topology.adminUrl, '--no-progress'], {
        stdout: (t) => void (out.stdout += t),
        stderr: (t) => void (out.stderr += t),
        env: {},
        interactive: false,
      });
      return { code, ...out };
    };
    const broken = join(dir, 'broken.yml');
    writeFileSync(broken, toYaml({ _format_version: '3.0', services: [{ name: 'bad', host: 'h', port: 70000 }] }));
    const parsedBad = await run(['parse', broken]);
    expect(parsedBad.code).toBe(1);
    expect(parsedBad.stderr).toMatch(/Failed parsing:[\s\S]*service 'bad'.*port/);
    const extra = join(dir, 'extra.yml');
    writeFileSync(extra, toYaml({ _format_version: '3.0', consumers: [{ username: 'imported-user', keyauth_credentials: [{ key: 'imported-key' }] }] }));
    expect(await run(['parse', extra])).toMatchObject({ code: 0, stdout: 'parse successful\n' });

    const admin = adminClient(topology.adminUrl);
    const kept = await admin.post('/consumers', { username: `kept-${Date.now()}` });
    expect(kept.status).toBe(201);
    expect(await run(['db_import', extra])).toMatchObject({ code: 0, stdout: 'parse successful, beginning import\nimport successful\n' });
    expect((await admin.get('/consumers/imported-user')).status).toBe(200);
    expect((await admin.get(`/consumers/${kept.body.id}`)).status).toBe(200);
    await topology.converge();
    expect((await proxied(`${topology.proxyUrl}/decl`, { headers: { apikey: 'imported-key' } })).status).not.toBe(401);

    const exported = join(dir, 'exported.yml');
    expect((await run(['db_export', exported])).code).toBe(0);
    expect(readFileSync(exported, 'utf8')).toContain('imported-user');
    const again = await run(['db_export', exported]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists. Will not overwrite it.');
  });

  it('an unreachable admin API and a bad command are reported, with exit codes 1 and 2', async () => {
    const down = await gatehouseConfig(['dump'], 'http://127.0.0.1:9');
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^gatehouse config: cannot reach the admin API at http:\/\/127\.0\.0\.1:9/);
    const bad = await gatehouseConfig(['explode'], topology.adminUrl);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown config command 'explode'");
  });
});
