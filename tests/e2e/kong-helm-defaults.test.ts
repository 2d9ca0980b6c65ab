// Kong's Helm chart defaults on the real `gatehouse start`: the KONG_* environment the chart gives its proxy container
// (DB-less, the admin API on TLS with HTTP/2 for the ingress controller, a plain and a TLS proxy listener, a status
// listener, two worker processes, stream and cluster listeners off), with the addresses narrowed to loopback and
// free ports. The node starts as Kong does, and the ingress controller's flow works: POST /config over the admin
// API's TLS, then traffic on both proxy listeners.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Agent, fetch as undiciFetch } from 'undici';
import { freePorts, gatehouseNodeArgs, spawnProcess, startEchoUpstream, type EchoUpstream, type SpawnedProcess } from '@gatehouse/testkit';

jest.setTimeout(240_000);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** the admin API's and the proxy's certificates are the node's self-signed ones, as in a fresh Kong pod */
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

describe("gatehouse started with the KONG_* environment of Kong's Helm chart", () => {
  let upstream: EchoUpstream;
  let node: SpawnedProcess;
  let prefix: string;
  let adminUrl: string;
  let proxyUrl: string;
  let proxyTlsUrl: string;
  let statusUrl: string;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    prefix = mkdtempSync(join(tmpdir(), 'gatehouse-helm-prefix-'));
    const [proxyPort, proxyTlsPort, adminPort, statusPort] = await freePorts(4);
    adminUrl = `https://127.0.0.1:${adminPort}`;
    proxyUrl = `http://127.0.0.1:${proxyPort}`;
    proxyTlsUrl = `https://127.0.0.1:${proxyTlsPort}`;
    statusUrl = `http://127.0.0.1:${statusPort}`;
    node = await spawnProcess(process.execPath, gatehouseNodeArgs('start'), {
      name: 'gatehouse start (Helm env)',
      cwd: ROOT,
      env: {
        // the chart's values, loopback and free ports in place of 0.0.0.0 / [::] and 8000 / 8443 / 8444 / 8100
        KONG_ADMIN_ACCESS_LOG: '/dev/stdout',
        KONG_ADMIN_ERROR_LOG: '/dev/stderr',
        KONG_ADMIN_GUI_ACCESS_LOG: '/dev/stdout',
        KONG_ADMIN_GUI_ERROR_LOG: '/dev/stderr',
        KONG_ADMIN_LISTEN: `127.0.0.1:${adminPort} http2 ssl`,
        KONG_CLUSTER_LISTEN: 'off',
        KONG_DATABASE: 'off',
        KONG_KIC: 'on',
        KONG_LUA_PACKAGE_PATH: '/opt/?.lua;/opt/?/init.lua;;',
        KONG_NGINX_WORKER_PROCESSES: '2',
        KONG_PLUGINS: 'bundled',
        KONG_PORTAL_API_ACCESS_LOG: '/dev/stdout',
        KONG_PORTAL_API_ERROR_LOG: '/dev/stderr',
        KONG_PORT_MAPS: '80:8000, 443:8443',
        KONG_PREFIX: prefix,
        KONG_PROXY_ACCESS_LOG: '/dev/stdout',
        KONG_PROXY_ERROR_LOG: '/dev/stderr',
        KONG_PROXY_LISTEN: `127.0.0.1:${proxyPort}, 127.0.0.1:${proxyTlsPort} http2 ssl`,
        KONG_PROXY_STREAM_ACCESS_LOG: '/dev/stdout basic',
        KONG_PROXY_STREAM_ERROR_LOG: '/dev/stderr',
        KONG_ROUTER_FLAVOR: 'traditional',
        KONG_STATUS_ACCESS_LOG: 'off',
        KONG_STATUS_ERROR_LOG: '/dev/stderr',
        KONG_STATUS_LISTEN: `127.0.0.1:${statusPort}`,
        KONG_STREAM_LISTEN: 'off',
        KONG_NGINX_DAEMON: 'off',
        KONG_LOG_LEVEL: 'warn',
      },
      readyPattern: /status API listening/,
      timeoutMs: Number(process.env.E2E_START_TIMEOUT_MS ?? 120_000),
    });
  });

  afterAll(async () => {
    await node?.stop();
    await upstream?.close();
    if (prefix) rmSync(prefix, { recursive: true, force: true });
  });

  it('serves the admin API over TLS with HTTP/2 offered, DB-less, with the flavor and workers the chart sets', async () => {
    expect(node.stdout()).toContain(`admin API listening on ${adminUrl} (database: off)`);
    expect(node.stdout()).toContain('(2 workers)');
    const root = await undiciFetch(`${adminUrl}/`, { dispatcher: insecure });
    expect(root.status).toBe(200);
    const { configuration } = (await root.json()) as { configuration: Record<string, unknown> };
    expect(configuration).toMatchObject({ database: 'off', router_flavor: 'traditional' });
    const plain = await fetch(`${adminUrl.replace('https:', 'http:')}/`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(plain).not.toBe(200);
    expect((await fetch(`${statusUrl}/status`)).status).toBe(200);
  });

  it("takes the ingress controller's POST /config over TLS and proxies on both listeners", async () => {
    const config = {
      _format_version: '3.0',
      services: [{ name: 'echo', url: upstream.url, routes: [{ name: 'echo', paths: ['/helm'] }] }],
    };
    const posted = await undiciFetch(`${adminUrl}/config`, {
      method: 'POST',
      dispatcher: insecure,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(config),
    });
    expect(posted.status).toBe(201);
    for (const [url, dispatcher] of [
      [proxyUrl, undefined],
      [proxyTlsUrl, insecure],
    ] as const) {
      let status = 0;
      for (let i = 0; i < 200 && status !== 200; i++) {
        status = (await undiciFetch(`${url}/helm/x`, dispatcher ? { dispatcher } : {})).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(200);
    }
  });

  it('logs the chart settings that have no meaning here once each, by name', () => {
    const lines = node.stderr().split('\n');
    for (const name of ['port_maps', 'lua_package_path', 'cluster_listen', 'nginx_daemon']) {
      expect(lines.filter((l) => l.includes(`Kong setting '${name}'`))).toHaveLength(1);
    }
    // settings that map are not listed
    for (const name of ['admin_listen', 'proxy_listen', 'database', 'nginx_worker_processes', 'router_flavor']) {
      expect(lines.filter((l) => l.includes(`Kong setting '${name}'`))).toHaveLength(0);
    }
  });
});
