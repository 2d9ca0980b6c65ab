// What the browser tests share: headless Chromium with every `*.test` name resolving to 127.0.0.1 (so each page
// has an origin of its own), and a server for the pages it opens.
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches /usr/bin/chromium headless; null where it is missing outside CI (the caller leaves its browser checks
 * out), an error where it is missing under CI=true (.ci/run installs it).
 */
export async function launchChromium(): Promise<Browser | null> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: CI must install chromium`);
    return null;
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--host-resolver-rules=MAP *.test 127.0.0.1'],
  });
}

export interface PageServer {
  port: number;
  close(): Promise<void>;
}

/** An HTTP server on a free loopback port answering every request with the HTML page `html(request)` writes. */
export async function startPageServer(html: (req: IncomingMessage) => string): Promise<PageServer> {
  const server = createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(html(req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
