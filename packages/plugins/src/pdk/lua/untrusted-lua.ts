/**
 * Kong's `untrusted_lua` settings, for every Lua feature of the process (pre/post-function, custom_fields_by_lua,
 * request-transformer templates): `off` refuses Lua at admin write time (and renders no template), `sandbox` (the
 * default) runs it in the restricted environment, `on` gives it the VM's whole global environment (the PDK subset
 * and the run budget stay). `requires` are modules `require` may load in the sandbox, `environment` globals (dotted
 * names reach into tables: `string.rep`) it may see; both only apply to `sandbox`, as in Kong.
 */
export interface UntrustedLuaOptions {
  mode: 'off' | 'sandbox' | 'on';
  requires: string[];
  environment: string[];
}

export const UNTRUSTED_LUA_DEFAULT: UntrustedLuaOptions = { mode: 'sandbox', requires: [], environment: [] };

/** Kong's words for Lua refused because `untrusted_lua = off`. */
export const UNTRUSTED_LUA_OFF_MESSAGE = "loading of untrusted Lua code disabled because 'untrusted_lua' config option is set to 'off'";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Reads the settings from their values (`GATEHOUSE_UNTRUSTED_LUA*`: comma-separated lists); throws on a bad one. */
export function parseUntrustedLua(mode: string | undefined, requires: string | undefined, environment: string | undefined): UntrustedLuaOptions {
  const chosen = (mode ?? '').trim() || 'sandbox';
  if (chosen !== 'off' && chosen !== 'sandbox' && chosen !== 'on') throw new Error(`untrusted_lua has an invalid value: '${chosen}' (off, sandbox, on)`);
  const list = (value: string | undefined, name: string) =>
    (value ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean)
      .map((v) => {
        if (!NAME.test(v)) throw new Error(`${name}: '${v}' is not a Lua name`);
        return v;
      });
  return { mode: chosen, requires: list(requires, 'untrusted_lua_sandbox_requires'), environment: list(environment, 'untrusted_lua_sandbox_environment') };
}

let current: UntrustedLuaOptions = UNTRUSTED_LUA_DEFAULT;

/** The process's settings (set once at start, before any Lua runs). */
export function untrustedLua(): UntrustedLuaOptions {
  return current;
}

export function setUntrustedLua(options: UntrustedLuaOptions): void {
  current = options;
}
