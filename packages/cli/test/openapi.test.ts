import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CORE_ROUTE_DOCS, GATEWAY_ROUTE_DOCS, oauth2TokensExtension, proxyCacheExtension, RBAC_ROUTE_DOCS, startControlPlane, type ControlPlaneNode } from '@gatehouse/control-plane';
import { localCacheAdmin, MemoryCacheStore, MemoryTokenStore } from '@gatehouse/plugins';
import { MemoryBus } from '@gatehouse/sync';
import { chromium } from 'playwright-core';
import { controlPlaneOptions, createLogger, readSettings } from '../src';
import { createNodeMetrics } from '../src/node-metrics';

/**
 * /openapi.json against the admin API the `gatehouse` command assembles (every extension included): it names every
 * route the Express app registered, is the same bytes on every fetch, passes `redocly lint` (recommended rules,
 * redocly.yaml), and /docs renders it from the installed Swagger UI.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** what the page script below uses of the browser's window (the test compiles without the DOM library) */
interface BrowserWindow {
  scrollY: number;
  innerHeight: number;
  scrollBy(x: number, y: number): void;
  scrollTo(x: number, y: number): void;
  requestAnimationFrame(callback: () => void): number;
  document: {
    querySelectorAll(selector: string): Iterable<{
      querySelector(selector: string): { textContent: string | null; getAttribute(name: string): string | null } | null;
    }>;
  };
}

/** `METHOD /path` of every route on the app's router and the routers mounted in it. */
function registeredRoutes(stack: Layer[]): string[] {
  const found: string[] = [];
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const method of Object.keys(layer.route.methods).filter((m) => METHODS.includes(m))) {
        for (const path of paths) found.push(`${method.toUpperCase()} ${path}`);
      }
    } else if (layer.handle?.stack) {
      found.push(...registeredRoutes(layer.handle.stack));
    }
  }
  return found;
}

/** parameters written the same way on both sides: `/rbac/users/:user` and `/rbac/users/{user}` → `/rbac/users/{}` */
const shapeOf = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path).replace(/[:*][A-Za-z0-9_]+|\{[^}]+\}/g, '{}');

let dir: string;
let cp: ControlPlaneNode;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-openapi-'));
  const settings = readSettings({ GATEHOUSE_ADMIN_LISTEN: '127.0.0.1:0', GATEHOUSE_DATA_DIR: dir, GATEHOUSE_LOG_LEVEL: 'error' }, 'all');
  cp = await startControlPlane(
    controlPlaneOptions(settings, {
      bus: new MemoryBus(),
      secret: 'openapi-test-cluster-secret-0123456789abcdef',
      log: createLogger('error', 'all'),
      // as `gatehouse start` assembles it: oauth2 tokens, the proxy-cache admin endpoints, the node's /metrics
      extensions: [oauth2TokensExtension(new MemoryTokenStore()), proxyCacheExtension(localCacheAdmin(new MemoryCacheStore(1024 * 1024)))],
      metrics: createNodeMetrics('openapi-test-node', 'test'),
    }),
  );
  base = `http://127.0.0.1:${cp.admin.port}`;
});

afterAll(async () => {
  await cp?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('GET /openapi.json', () => {
  it('describes every operation registered on the admin app', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item).filter((m) => METHODS.includes(m))) documented.add(`${method.toUpperCase()} ${shapeOf(path)}`);
    }
    const routes = registeredRoutes((cp.app as unknown as { router: { stack: Layer[] } }).router.stack);
    expect(routes.length).toBeGreaterThan(200);
    const missing = routes.filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return !documented.has(`${method} ${shapeOf(path)}`);
    });
    expect(missing).toEqual([]);
    // and nothing documented that the app does not serve
    const served = new Set(routes.map((route) => route.replace(/ (.*)$/, (_m, path: string) => ` ${shapeOf(path)}`)));
    expect([...documented].filter((op) => !served.has(op))).toEqual([]);
  });

  it('covers the nested and custom routes with their own summaries', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary?: string; operationId?: string }>> };
    expect(doc.paths['/consumers/{consumer_id_or_key}/key-auth']!.post!.summary).toBe('Create one of key-auths of a consumer');
    expect(doc.paths['/rbac/users/{user}']!.patch!.summary).toBe('Update an RBAC user');
    expect(doc.paths['/rbac/roles/{role}/endpoints/{workspace}/{endpoint}']!.get!.summary).toBe('Read an endpoint permission of a role');
    expect(doc.paths['/status']!.get!.summary).toBe('Health of the node');
    expect(doc.paths['/schemas/{entity}']!.get!.summary).toBe("An entity's schema");
    expect(doc.paths['/clustering/data-planes']!.get!.summary).toBe('The data planes of this cluster');
    expect(doc.paths['/key-sets']!.put!.summary).toBe('Create or replace a key set by the name in the body');
    expect(doc.paths['/oauth2_tokens/{token}']!.delete!.summary).toBe('Revoke an oauth2 token');
    expect(doc.paths['/apis/{api}/plugins']!.get!.summary).toBe("List a legacy API's plugins");
    expect(doc.paths['/workspaces/{workspace}']!.put!.summary).toBe('Create or replace a workspace');
    for (const item of Object.values(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (METHODS.includes(method)) expect(operation.summary).not.toMatch(/^(GET|POST|PUT|PATCH|DELETE) \//);
      }
    }
  });

  it('has no doc for a route the app does not register', () => {
    const routes = new Set(registeredRoutes((cp.app as unknown as { router: { stack: Layer[] } }).router.stack));
    const documented = Object.entries({ ...CORE_ROUTE_DOCS, ...RBAC_ROUTE_DOCS, ...GATEWAY_ROUTE_DOCS }).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.length).toBeGreaterThan(60);
    expect(documented.filter((route) => !routes.has(route))).toEqual([]);
  });

  it('takes entity schemas from the definitions and declares the token header', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Record<string, any>;
    const post = doc.paths['/consumers/{consumer_id_or_key}/key-auth'].post;
    expect(post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/KeyauthCredentialInput' });
    expect(doc.components.schemas.KeyauthCredentialInput.properties).toHaveProperty('key');
    expect(doc.components.securitySchemes.adminToken).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Kong-Admin-Token' }));
    expect(doc.servers.length).toBeGreaterThan(0);
  });

  it('is the same bytes on every fetch: generated defaults are not written into it', async () => {
    const first = await (await fetch(`${base}/openapi.json`)).text();
    const second = await (await fetch(`${base}/openapi.json`)).text();
    expect(second).toBe(first);
    const doc = JSON.parse(first) as Record<string, any>;
    expect(doc.components.schemas.Oauth2ConfigInput.properties.provision_key).not.toHaveProperty('default');
    expect(doc.components.schemas.Oauth2Config.properties.provision_key).not.toHaveProperty('default');
    expect(doc.components.schemas.Oauth2ConfigInput.properties.token_expiration.default).toBe(7200);
  });

  it('passes redocly lint with the recommended rules', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, await (await fetch(`${base}/openapi.json`)).text());
    const redocly = join(ROOT, 'node_modules/.bin/redocly');
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const result = await promisify(execFile)(redocly, ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'], { env, cwd: ROOT }).catch(
      (err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }),
    );
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string }> };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toEqual(expect.objectContaining({ errors: 0, warnings: 0 }));
  }, 120_000);
});

describe('GET /docs', () => {
  it('serves the page and its assets from the installed renderer', async () => {
    const page = await fetch(`${base}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<script src="/docs/swagger-ui-bundle.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${base}/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    const css = await fetch(`${base}/docs/swagger-ui.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await (await fetch(`${base}/docs/init.js`)).text()).toContain("url: '/openapi.json'");
    expect((await fetch(`${base}/docs/package.json`)).status).toBe(404);
  });

  it('renders the operations in a browser', async () => {
    if (!existsSync(CHROMIUM)) {
      // outside CI a machine without chromium checks everything but the rendering; CI installs it (.ci/run)
      if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: CI must install chromium`);
      return;
    }
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const tab = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
      const outside: string[] = [];
      tab.on('request', (req) => {
        if (!req.url().startsWith(base)) outside.push(req.url());
      });
      const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => METHODS.includes(m))
          .map((m) => `${m.toUpperCase()} ${path}`),
      );
      await tab.goto(`${base}/docs`);
      await tab.waitForSelector('.opblock', { timeout: 30_000 });
      expect(await tab.locator('.info .title').innerText()).toContain('Gatehouse Admin API');
      // Swagger UI draws only the operations near the viewport: scroll through the page (again from the top if the
      // browser lagged behind) until every operation of the document has been drawn, or 60 s passed
      const rendered = await tab.evaluate(async (expected) => {
        const window = globalThis as unknown as BrowserWindow;
        const document = window.document;
        const requestAnimationFrame = (done: () => void) => window.requestAnimationFrame(done);
        const seen = new Set<string>();
        const frame = () => new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
        const deadline = Date.now() + 60_000;
        while (expected.some((op) => !seen.has(op)) && Date.now() < deadline) {
          await frame();
          for (const block of document.querySelectorAll('.opblock')) {
            const method = block.querySelector('.opblock-summary-method')?.textContent;
            const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path');
            seen.add(`${method} ${path}`);
          }
          const before = window.scrollY;
          window.scrollBy(0, window.innerHeight / 2);
          if (window.scrollY === before) window.scrollTo(0, 0);
        }
        return [...seen];
      }, operations);
      expect(rendered.sort()).toEqual(operations.sort());
      expect(outside).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
