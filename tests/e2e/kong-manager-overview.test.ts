// Kong Manager's Overview page in Chromium: a `gatehouse start` configured with Kong's names (KONG_PG_*, proxy_listen
// with a plain and a TLS entry, admin_gui_url) answers GET / with the `configuration` keys the Overview reads, and a
// page from Kong Manager's origin, calling the admin API across origins as Kong Manager does, shows the datastore
// card (type, user, host, port, ssl) and the proxy ports. The page reads the fields with the fallbacks of Kong
// Manager's overview (src/pages/overview/Overview.vue: `configuration.proxy_listeners` first plain / first ssl entry,
// `admin_listen[0]`, the datastore card only when `database` is 'postgres', '--' where a value is missing).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { createTestDatabase, freePorts, gatehouseNodeArgs, spawnProcess, type SpawnedProcess, type TestDatabase } from '@gatehouse/testkit';
import { launchChromium, startPageServer, type PageServer } from '../support/chromium-pages';

jest.setTimeout(240_000);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The Overview's cards, filled from GET / as Kong Manager fills them; each value is in a `[data-item]` element. */
function overviewPage(adminUrl: string): string {
  const script = `
const put = (card, label, value) => {
  const li = document.createElement('li');
  li.dataset.item = card + '/' + label;
  li.textContent = String(value);
  document.getElementById('cards').append(li);
};
fetch(${JSON.stringify(`${adminUrl}/`)}, { credentials: 'include' }).then((r) => r.json()).then((info) => {
  const config = info.configuration || {};
  const gui = config.admin_gui_listeners, proxy = config.proxy_listeners;
  const plainGui = gui?.find?.((l) => !l.ssl), sslGui = gui?.find?.((l) => l.ssl);
  const plainProxy = proxy?.find?.((l) => !l.ssl), sslProxy = proxy?.find?.((l) => l.ssl);
  put('gateway', 'edition', info.edition);
  put('gateway', 'version', info.version);
  put('node', 'address', config.admin_listen?.[0] ?? '--');
  put('node', 'hostname', info.hostname ?? '--');
  put('ports', 'port', plainGui?.port ?? '--');
  put('ports', 'ssl', sslGui?.port ?? '--');
  put('ports', 'proxy', plainProxy?.port ?? '--');
  put('ports', 'proxy ssl', sslProxy?.port ?? '--');
  if (config.database === 'postgres') {
    put('datastore', 'type', config.database);
    put('datastore', 'user', config.pg_user);
    put('datastore', 'host', config.pg_host);
    put('datastore', 'port', config.pg_port);
    put('datastore', 'ssl', config.pg_ssl);
  }
  document.body.dataset.loaded = 'yes';
});`;
  return `<!doctype html><title>Overview</title><ul id="cards"></ul><script>${script}</script>`;
}

describe("Kong Manager's Overview page in Chromium", () => {
  let db: TestDatabase;
  let node: SpawnedProcess;
  let pages: PageServer;
  let browser: Browser | null = null;
  let adminUrl: string;
  let managerOrigin: string;
  let proxyPort: number;
  let proxyTlsPort: number;
  let prefix: string;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'kong_overview' });
    pages = await startPageServer(() => overviewPage(adminUrl));
    managerOrigin = `http://manager.test:${pages.port}`;
    const [proxy, proxyTls, adminPort] = await freePorts(3);
    proxyPort = proxy!;
    proxyTlsPort = proxyTls!;
    adminUrl = `http://127.0.0.1:${adminPort}`;
    const url = new URL(db.url);
    prefix = mkdtempSync(join(tmpdir(), 'gatehouse-kong-overview-'));
    node = await spawnProcess(process.execPath, gatehouseNodeArgs('start'), {
      name: 'gatehouse start (Kong names)',
      cwd: ROOT,
      env: {
        GATEHOUSE_WORKERS: '1',
        KONG_DATABASE: 'postgres',
        KONG_PG_HOST: url.hostname,
        KONG_PG_PORT: url.port || '5432',
        KONG_PG_USER: decodeURIComponent(url.username),
        KONG_PG_PASSWORD: decodeURIComponent(url.password),
        KONG_PG_DATABASE: url.pathname.slice(1),
        // Kong's prefix: the node's own data directory, not the default ./.gatehouse another test's node may share
        KONG_PREFIX: prefix,
        KONG_PROXY_LISTEN: `127.0.0.1:${proxyPort}, 127.0.0.1:${proxyTlsPort} http2 ssl`,
        KONG_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
        KONG_ADMIN_GUI_URL: managerOrigin,
        KONG_LOG_LEVEL: 'warn',
      },
      readyPattern: /proxy listening/,
      timeoutMs: Number(process.env.E2E_START_TIMEOUT_MS ?? 60_000),
    });
    // null outside CI on a machine without chromium: the browser check is left out
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await node?.stop();
    await pages?.close();
    await db?.drop();
    if (prefix) rmSync(prefix, { recursive: true, force: true });
  });

  it('shows the datastore card and the proxy ports', async () => {
    if (!browser) return;
    const tab = await browser.newPage();
    await tab.goto(`${managerOrigin}/overview`);
    await tab.waitForSelector('body[data-loaded="yes"]');
    const shown = Object.fromEntries(
      await tab.$$eval('[data-item]', (items) => items.map((li) => [(li as unknown as { dataset: { item: string } }).dataset.item, li.textContent])),
    );
    const url = new URL(db.url);
    expect(shown).toEqual({
      'gateway/edition': 'community',
      'gateway/version': expect.stringMatching(/^\d+\.\d+\.\d+/),
      'node/address': adminUrl.replace('http://', ''),
      'node/hostname': expect.any(String),
      'ports/port': '--',
      'ports/ssl': '--',
      'ports/proxy': String(proxyPort),
      'ports/proxy ssl': String(proxyTlsPort),
      'datastore/type': 'postgres',
      'datastore/user': decodeURIComponent(url.username),
      'datastore/host': url.hostname,
      'datastore/port': url.port || '5432',
      'datastore/ssl': 'false',
    });
    await tab.close();
  });
});
