import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { fakeContext } from '../../../test/support/fake-context';
import { serverlessConfigSchema } from '../../pre-function/schema';
import { customFieldsByLua } from '../../shared/custom-fields';
import { newExchange } from '../exchange';
import { LuaSandbox } from './sandbox';
import { parseUntrustedLua, setUntrustedLua, UNTRUSTED_LUA_DEFAULT, type UntrustedLuaOptions } from './untrusted-lua';

const logger = { error: () => undefined };
// a Lua module on LUA_PATH, as an operator installs one next to the gateway
const modules = mkdtempSync(join(tmpdir(), 'gatehouse-lua-'));
writeFileSync(join(modules, 'greeting.lua'), 'return { hello = function(name) return "hello " .. name end }\n');
process.env.LUA_PATH = `${join(modules, '?.lua')};;`;

function answer(options: UntrustedLuaOptions, source: string) {
  const sandbox = new LuaSandbox(options);
  const { ctx } = fakeContext({});
  return sandbox.runSnippet(sandbox.compile(source), newExchange(ctx, 'access', 'pre-function', logger));
}
const say = (expr: string) => `return kong.response.exit(200, { value = ${expr} })`;

afterEach(() => setUntrustedLua(UNTRUSTED_LUA_DEFAULT));
afterAll(() => rmSync(modules, { recursive: true, force: true }));

describe('untrusted_lua', () => {
  it('reads the settings and refuses a bad one', () => {
    expect(parseUntrustedLua(undefined, undefined, undefined)).toEqual({ mode: 'sandbox', requires: [], environment: [] });
    expect(parseUntrustedLua('on', 'a.b, c', 'string.rep,load')).toEqual({ mode: 'on', requires: ['a.b', 'c'], environment: ['string.rep', 'load'] });
    expect(() => parseUntrustedLua('maybe', '', '')).toThrow("untrusted_lua has an invalid value: 'maybe' (off, sandbox, on)");
    expect(() => parseUntrustedLua('sandbox', 'a b', '')).toThrow("untrusted_lua_sandbox_requires: 'a b' is not a Lua name");
  });

  it('sandbox (the default): no require, no string.rep, no load', () => {
    expect(() => answer(UNTRUSTED_LUA_DEFAULT, say('require("greeting").hello("x")'))).toThrow("require 'greeting' not allowed within sandbox");
    expect(() => answer(UNTRUSTED_LUA_DEFAULT, say('string.rep("a", 3)'))).toThrow(/attempt to call a nil value \(field 'rep'\)/);
    expect(() => answer(UNTRUSTED_LUA_DEFAULT, say('load("return 1")()'))).toThrow(/attempt to call a nil value \(global 'load'\)/);
  });

  it('sandbox with untrusted_lua_sandbox_requires and _environment: the listed modules and globals, nothing more', () => {
    const options = { mode: 'sandbox' as const, requires: ['greeting'], environment: ['string.rep', 'load'] };
    expect(answer(options, say('require("greeting").hello("kong")'))).toEqual({ status: 200, body: { value: 'hello kong' }, headers: {} });
    expect(answer(options, say('string.rep("ab", 3) .. string.upper("c")'))).toEqual({ status: 200, body: { value: 'abababC' }, headers: {} });
    expect(answer(options, say('load("return 6 * 7")()'))).toEqual({ status: 200, body: { value: 42 }, headers: {} });
    expect(() => answer(options, say('require("string").rep("a", 2)'))).toThrow("require 'string' not allowed within sandbox");
    expect(() => answer(options, say('os.getenv("HOME")'))).toThrow(/attempt to call a nil value \(field 'getenv'\)/);
  });

  it('on: every global of the VM, and still the PDK subset', () => {
    const on = { mode: 'on' as const, requires: [], environment: [] };
    expect(answer(on, say('require("greeting").hello("on") .. string.rep("!", 2)'))).toEqual({ status: 200, body: { value: 'hello on!!' }, headers: {} });
    expect(answer(on, say('type(os.getenv) .. " " .. type(debug) .. " " .. type(setmetatable)'))).toEqual({ status: 200, body: { value: 'function table function' }, headers: {} });
    expect(() => answer(on, 'kong.cache.get("x")')).toThrow('unsupported function: kong.cache');
  });

  it('off: nothing runs, and configs with Lua are refused with Kong\'s message', () => {
    const off = { mode: 'off' as const, requires: [], environment: [] };
    expect(() => answer(off, 'return 1')).toThrow("loading of untrusted Lua code disabled because 'untrusted_lua' config option is set to 'off'");
    setUntrustedLua(off);
    const pre = serverlessConfigSchema('pre-function').safeParse({ access: ['return 1'] });
    expect(pre.success ? null : pre.error.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['access.0', "error parsing pre-function: loading of untrusted Lua code disabled because 'untrusted_lua' config option is set to 'off'"],
    ]);
    const fields = customFieldsByLua.safeParse({ route: 'return 1' });
    expect(fields.success ? null : fields.error.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['route', "Error parsing function: loading of untrusted Lua code disabled because 'untrusted_lua' config option is set to 'off'"],
    ]);
    // a config without Lua stays valid
    expect(serverlessConfigSchema('pre-function').safeParse({}).success).toBe(true);
  });
});
