import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdminServer, type AdminServer } from '@gatehouse/control-plane';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, startPageServer, type PageServer } from '../support/chromium-pages';
import { startAdmin, type AdminHarness } from './support/admin-harness';

jest.setTimeout(120_000);

/**
 * Decision 27 in a real browser: a page served from a listed origin (Kong Manager) drives the admin API with fetch;
 * a page on another origin can neither post a form, nor send a text/plain body, nor call it with fetch, and nothing
 * changes; a page under a name rebound to the admin's loopback address gets 421. Names resolve to 127.0.0.1 through
 * Chromium's host resolver rules, so each page has an origin of its own.
 */
/** what the page scripts below use of the browser (the test compiles without the DOM library) */
interface PageGlobals {
  fetch(url: string, init?: Record<string, unknown>): Promise<{ status: number; type: string; json(): Promise<unknown> }>;
  document: { forms: Array<{ submit(): void }> };
}

let pages: PageServer;
let pagePort: number;
let h: AdminHarness;
let admin: AdminServer;
let adminUrl: string;
let browser: Browser | null = null;

beforeAll(async () => {
  // a page with a form that posts to the admin API, as a hostile page would
  pages = await startPageServer((req) => `<!doctype html><title>${String(req.headers.host)}</title><form method="POST" action="${adminUrl}/consumers"><input name="username" value="from-form"></form>`);
  pagePort = pages.port;
  h = await startAdmin('postgres', { adminGuiOrigins: [`http://manager.test:${pagePort}`] });
  admin = await startAdminServer(h.app, '127.0.0.1:0');
  adminUrl = `http://127.0.0.1:${admin.port}`;
  // null outside CI on a machine without chromium: this file's browser checks are left out
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await admin?.close();
  await h?.close();
  await pages?.close();
});

async function pageOn(origin: string): Promise<Page> {
  const tab = await browser!.newPage();
  await tab.goto(`${origin}/`);
  return tab;
}

const consumer = async (name: string) => (await h.http().get(`/consumers/${name}`)).status;

describe('in Chromium', () => {
  it('a page from the listed origin creates and reads through fetch (preflight, credentials)', async () => {
    if (!browser) return;
    const tab = await pageOn(`http://manager.test:${pagePort}`);
    const result = await tab.evaluate(async (base) => {
      const page = globalThis as unknown as PageGlobals;
      const made = await page.fetch(`${base}/consumers`, { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'from-manager' }) });
      const read = await page.fetch(`${base}/consumers/from-manager`, { credentials: 'include' });
      return { made: made.status, read: read.status, body: await read.json() };
    }, adminUrl);
    expect(result).toMatchObject({ made: 201, read: 200, body: { username: 'from-manager' } });
    await tab.close();
  });

  it('a page from another origin: its form post is answered 403 and changes nothing', async () => {
    if (!browser) return;
    const tab = await pageOn(`http://evil.test:${pagePort}`);
    const [answer] = await Promise.all([
      tab.waitForResponse((res) => res.url() === `${adminUrl}/consumers`),
      tab.evaluate(() => (globalThis as unknown as PageGlobals).document.forms[0]!.submit()),
    ]);
    expect(answer.status()).toBe(403);
    expect(await answer.json()).toEqual({ message: 'Cross-origin request refused' });
    expect(await consumer('from-form')).toBe(404);
    await tab.close();
  });

  it('a page from another origin: a text/plain no-cors post of a whole configuration and a fetch are refused and change nothing', async () => {
    if (!browser) return;
    const tab = await pageOn(`http://evil.test:${pagePort}`);
    const [plain] = await Promise.all([
      tab.waitForResponse((res) => res.url() === `${adminUrl}/config` && res.request().method() === 'POST'),
      tab.evaluate(async (base) => {
        const page = globalThis as unknown as PageGlobals;
        // a "simple" request: no preflight, the browser sends it and only hides the answer
        const document = '_format_version: "3.0"\nconsumers:\n- username: from-text\n';
        await page.fetch(`${base}/config`, { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: document });
      }, adminUrl),
    ]);
    expect(plain.status()).toBe(403);
    const json = await tab.evaluate(async (base) => {
      const page = globalThis as unknown as PageGlobals;
      try {
        const res = await page.fetch(`${base}/consumers`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'from-fetch' }) });
        return `answered ${res.status}`;
      } catch (err) {
        return `refused: ${(err as Error).name}`;
      }
    }, adminUrl);
    expect(json).toBe('refused: TypeError');
    expect(await consumer('from-text')).toBe(404);
    expect(await consumer('from-fetch')).toBe(404);
    await tab.close();
  });

  it('a page under a name rebound to the loopback listener gets 421', async () => {
    if (!browser) return;
    const tab = await browser.newPage();
    const res = await tab.goto(`http://rebound.test:${admin.port}/consumers`);
    expect(res?.status()).toBe(421);
    await tab.close();
  });
});
