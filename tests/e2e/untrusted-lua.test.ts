// Kong's untrusted_lua settings on the real `gatehouse start`, given by their Kong names: `off` refuses Lua in plugin
// configs at write time with Kong's message (pre-function, custom_fields_by_lua) and reports it in GET /; `sandbox`
// with untrusted_lua_sandbox_requires / _environment lets a snippet require a listed module from LUA_PATH and see a
// listed global, through the proxy.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createTestDatabase, freePorts, gatehouseNodeArgs, spawnProcess, startEchoUpstream, type EchoUpstream, type SpawnedProcess, type TestDatabase } from '@gatehouse/testkit';
import { waitUntil } from './support/helpers';

jest.setTimeout(240_000);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OFF = "loading of untrusted Lua code disabled because 'untrusted_lua' config option is set to 'off'";

interface Node {
  db: TestDatabase;
  process: SpawnedProcess;
  admin: string;
  proxy: string;
  dataDir: string;
}

async function startNode(env: NodeJS.ProcessEnv): Promise<Node> {
  const db = await createTestDatabase({ prefix: 'untrusted_lua' });
  const [proxyPort, adminPort] = await freePorts(2);
  // each node has a data directory of its own: two nodes sharing one (the default, ./.gatehouse) share the cluster
  // secret and the data plane's snapshot cache, and one may serve the other's configuration
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-untrusted-lua-node-'));
  const process = await spawnProcess(globalThis.process.execPath, gatehouseNodeArgs('start'), {
    name: 'gatehouse start (untrusted_lua)',
    cwd: ROOT,
    env: {
      GATEHOUSE_WORKERS: '1',
      GATEHOUSE_DATA_DIR: dataDir,
      DATABASE_URL: db.url,
      KONG_PROXY_LISTEN: `127.0.0.1:${proxyPort}`,
      KONG_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
      KONG_LOG_LEVEL: 'warn',
      ...env,
    },
    readyPattern: /proxy listening/,
    timeoutMs: Number(globalThis.process.env.E2E_START_TIMEOUT_MS ?? 60_000),
  });
  return { db, process, admin: `http://127.0.0.1:${adminPort}`, proxy: `http://127.0.0.1:${proxyPort}`, dataDir };
}

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('untrusted_lua', () => {
  let off: Node;
  let sandbox: Node;
  let upstream: EchoUpstream;
  let modules: string;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    modules = mkdtempSync(join(tmpdir(), 'gatehouse-lua-modules-'));
    writeFileSync(join(modules, 'greeting.lua'), 'return { hello = function(name) return "hello " .. name end }\n');
    [off, sandbox] = await Promise.all([
      startNode({ KONG_UNTRUSTED_LUA: 'off' }),
      startNode({ KONG_UNTRUSTED_LUA: 'sandbox', KONG_UNTRUSTED_LUA_SANDBOX_REQUIRES: 'greeting', KONG_UNTRUSTED_LUA_SANDBOX_ENVIRONMENT: 'string.rep', LUA_PATH: `${join(modules, '?.lua')};;` }),
    ]);
  });

  afterAll(async () => {
    for (const node of [off, sandbox]) {
      await node?.process.stop();
      await node?.db.drop();
      if (node) rmSync(node.dataDir, { recursive: true, force: true });
    }
    await upstream?.close();
    if (modules) rmSync(modules, { recursive: true, force: true });
  });

  it('off: GET / reports it, and pre-function and custom_fields_by_lua are refused with Kong\'s message', async () => {
    const root = (await (await fetch(`${off.admin}/`)).json()) as { configuration: Record<string, unknown> };
    expect(root.configuration).toMatchObject({ untrusted_lua: 'off', untrusted_lua_sandbox_requires: [], untrusted_lua_sandbox_environment: [] });
    const pre = await post(`${off.admin}/plugins`, { name: 'pre-function', config: { access: ['kong.response.exit(200)'] } });
    expect(pre.status).toBe(400);
    expect(await pre.json()).toMatchObject({ code: 2, name: 'schema violation', fields: { config: { access: [`error parsing pre-function: ${OFF}`] } } });
    const log = await post(`${off.admin}/plugins`, { name: 'http-log', config: { http_endpoint: upstream.url, custom_fields_by_lua: { route: 'return 1' } } });
    expect(log.status).toBe(400);
    expect(await log.json()).toMatchObject({ code: 2, fields: { config: { custom_fields_by_lua: `Error parsing function: ${OFF}` } } });
    // nothing was stored; a plugin without Lua is taken
    expect(await (await fetch(`${off.admin}/plugins`)).json()).toMatchObject({ data: [] });
    expect((await post(`${off.admin}/plugins`, { name: 'http-log', config: { http_endpoint: upstream.url } })).status).toBe(201);
  });

  it('sandbox with requires and environment: the listed module and global reach a snippet through the proxy', async () => {
    expect((await post(`${sandbox.admin}/services`, { name: 'echo', url: upstream.url })).status).toBe(201);
    expect((await post(`${sandbox.admin}/services/echo/routes`, { name: 'lua', paths: ['/lua'] })).status).toBe(201);
    const snippet = 'local g = require("greeting")\nkong.response.exit(200, { said = g.hello("kong"), rep = string.rep("ab", 2) })';
    expect((await post(`${sandbox.admin}/routes/lua/plugins`, { name: 'pre-function', config: { access: [snippet] } })).status).toBe(201);
    let last: { status: number; body: unknown } = { status: 0, body: null };
    // a timeout says what the proxy kept answering, and how the node's output ends
    await waitUntil('the snippet to answer', async () => {
      const res = await fetch(`${sandbox.proxy}/lua`);
      last = { status: res.status, body: await res.json() };
      return res.status === 200;
    }).catch((err: unknown) => {
      throw new Error(`${String(err)}; the proxy answered ${last.status} ${JSON.stringify(last.body)}; the node's output ends:\n${sandbox.process.output().slice(-4000)}`);
    });
    expect(last.body).toEqual({ said: 'hello kong', rep: 'abab' });
    // a module not listed stays out
    const refused = 'local ok, err = pcall(require, "string")\nkong.response.exit(200, { err = err })';
    expect((await post(`${sandbox.admin}/services/echo/routes`, { name: 'unlisted', paths: ['/unlisted'] })).status).toBe(201);
    expect((await post(`${sandbox.admin}/routes/unlisted/plugins`, { name: 'pre-function', config: { access: [refused] } })).status).toBe(201);
    await waitUntil('the refusal', async () => {
      const res = await fetch(`${sandbox.proxy}/unlisted`);
      last = { status: res.status, body: await res.json() };
      return res.status === 200;
    });
    expect(last.body).toEqual({ err: "require 'string' not allowed within sandbox" });
  });
});
