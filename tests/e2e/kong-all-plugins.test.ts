// A kong.yml that enables every bundled plugin (each Kong 3.9 plugin Gatehouse has) loads as a Kong user would load
// it: with POST /config in both topologies, every data plane compiling it and serving its routes, and with Kong's own
// decK (`deck sync`) against the embedded node's admin API.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stringify as toYaml } from 'yaml';
import { bundledPlugins } from '@gatehouse/plugins';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp, waitUntil } from './support/helpers';
import { proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';
import { allPluginsDocument, PLUGIN_CONFIGS } from './support/all-plugins';

const DECK = process.env.DECK_BINARY ?? '/usr/bin/deck';

function deck(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    execFile(DECK, [...args, '--no-color'], { timeout: 120_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new Error(`decK is not installed at ${DECK} (Debian package 'deck')`));
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

describe.each(TOPOLOGIES)('a kong.yml with every bundled plugin (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `gh-e2e-all-plugins-${name}-`));
    upstream = await startEchoUpstream();
    topology = await startTopology(name);
  }, 240_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => upstream?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('covers every bundled plugin but jwe-decrypt (which needs a key set of its own)', () => {
    expect(Object.keys(PLUGIN_CONFIGS).sort()).toEqual(bundledPlugins.map((p) => p.name).filter((n) => n !== 'jwe-decrypt').sort());
  });

  it('Kong Manager forms: /schemas/plugins/{name} describes every plugin, its config record field by field', async () => {
    for (const plugin of Object.keys(PLUGIN_CONFIGS)) {
      const res = await fetch(`${topology.adminUrl}/schemas/plugins/${plugin}`);
      const schema = (await res.json()) as { fields: Array<Record<string, { type: string; fields?: unknown[] }>> };
      expect([plugin, res.status]).toEqual([plugin, 200]);
      const config = schema.fields.find((f) => 'config' in f)?.config;
      expect([plugin, config?.type, Array.isArray(config?.fields)]).toEqual([plugin, 'record', true]);
    }
  });

  it('loads with POST /config, and every data plane compiles it and serves its routes', async () => {
    const res = await fetch(`${topology.adminUrl}/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(allPluginsDocument(upstream.url)) });
    const body = await res.text();
    expect({ status: res.status, body: res.status === 201 ? '' : body }).toEqual({ status: 201, body: '' });
    await topology.converge();
    for (const dp of topology.dataPlanes) {
      await waitUntil('the termination route', async () => (await proxied(`${dp.proxyUrl}/p-request-termination`)).status === 418);
      expect((await proxied(`${dp.proxyUrl}/p-redirect`, { redirect: 'manual' })).headers.get('location')).toBe('https://example.org/new');
      const transformed = await proxied(`${dp.proxyUrl}/p-pre-function`);
      expect(transformed.status).toBe(200);
      expect(transformed.body.headers['x-pre']).toBe('1');
    }
  });

  if (name === 'embedded') {
    it('syncs with decK, plugin by plugin through the admin API', async () => {
      // decK writes through the entity endpoints: start from an empty configuration
      const reset = await deck(['reset', '--force', '--kong-addr', topology.adminUrl]);
      expect(reset.code).toBe(0);
      const file = join(dir, 'kong.yaml');
      writeFileSync(file, toYaml(allPluginsDocument(upstream.url)));
      const sync = await deck(['sync', '--state', file, '--kong-addr', topology.adminUrl]);
      expect({ code: sync.code, out: sync.code === 0 ? '' : sync.out }).toEqual({ code: 0, out: '' });
      const plugins = (await (await fetch(`${topology.adminUrl}/plugins?size=1000`)).json()) as { data: Array<{ name: string }> };
      expect(plugins.data.map((p) => p.name).sort()).toEqual(Object.keys(PLUGIN_CONFIGS).sort());
    });
  }
});
