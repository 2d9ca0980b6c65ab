import { getHeapStatistics } from 'node:v8';
import { lauxlib, lua, lualib, to_luastring, type JsFunction, type LuaState } from 'fengari';
import { BOOTSTRAP_LUA } from './bootstrap';
import { pushValue, readArgs, readValue, stringAt, type LuaValue } from './marshal';
import { UNTRUSTED_LUA_DEFAULT, type UntrustedLuaOptions } from './untrusted-lua';

/**
 * One sandboxed Lua 5.3 VM (fengari, pure JavaScript). Code is compiled once (`compile`, cached by text) and run many
 * times (`run`); every run has an instruction, time and memory budget enforced by a count hook, so a snippet that
 * loops or allocates without end fails that run alone (a `LuaRunError`), and the event loop goes on.
 */

export interface LuaBudget {
  /** VM instructions one run may execute */
  instructions: number;
  /** wall-clock milliseconds one run may take */
  milliseconds: number;
  /** growth of the process heap (V8 plus external buffers) one run may cause, in bytes */
  memoryBytes: number;
}

export const DEFAULT_LUA_BUDGET: LuaBudget = { instructions: 10_000_000, milliseconds: 1000, memoryBytes: 32 * 1024 * 1024 };

/** Code that does not compile; `message` is Lua's (`[string "…"]:1: unexpected symbol near '<eof>'`). */
export class LuaSyntaxError extends Error {}

/** A run that failed: a Lua error, an unsupported PDK function, or a budget exceeded. */
export class LuaRunError extends Error {}

/** A compiled chunk, kept in the VM's registry. */
export interface LuaChunk {
  readonly ref: number;
  readonly source: string;
}

/** The JavaScript functions the Lua side calls, flat by name (`request_get_header`, …): arguments in, one value out. */
export type HostFunctions = Record<string, (...args: LuaValue[]) => unknown>;

const HOOK_EVERY = 10;
const CHUNK_CACHE_LIMIT = 10_000;

function heapInUse(): number {
  const stats = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { external_memory?: number };
  return stats.used_heap_size + (stats.external_memory ?? 0);
}

export class LuaVm {
  /** the thread every run uses: a stack of its own, kept small (the main one grew while the sandbox was built) */
  private readonly L: LuaState;
  private readonly helpers: number;
  private readonly chunks = new Map<string, LuaChunk | LuaSyntaxError>();
  private budget: LuaBudget;
  private steps = 0;
  private deadline = 0;
  private heapLimit = 0;
  private overrun: string | null = null;

  constructor(host: HostFunctions, budget: LuaBudget = DEFAULT_LUA_BUDGET, options: UntrustedLuaOptions = UNTRUSTED_LUA_DEFAULT) {
    this.budget = budget;
    const L = lauxlib.luaL_newstate();
    lualib.luaL_openlibs(L);
    if (lauxlib.luaL_loadbufferx(L, to_luastring(BOOTSTRAP_LUA), null, to_luastring('=sandbox'), to_luastring('t')) !== lua.LUA_OK) {
      throw new Error(`Lua sandbox does not load: ${stringAt(L, -1)}`);
    }
    lua.lua_createtable(L, 0, Object.keys(host).length + 1);
    for (const [name, fn] of Object.entries(host)) {
      lua.lua_pushjsfunction(L, this.wrap(fn));
      lua.lua_setfield(L, -2, to_luastring(name));
    }
    lua.lua_pushstring(L, to_luastring('gatehouse:exit'));
    lua.lua_setfield(L, -2, to_luastring('exit_marker'));
    lua.lua_createtable(L, 0, 3);
    for (const [key, value] of [['mode', options.mode], ['requires', options.requires.join(' ')], ['environment', options.environment.join(' ')]] as const) {
      lua.lua_pushstring(L, to_luastring(value));
      lua.lua_setfield(L, -2, to_luastring(key));
    }
    if (lua.lua_pcall(L, 2, 1, 0) !== lua.LUA_OK) throw new Error(`Lua sandbox does not start: ${stringAt(L, -1)}`);
    this.helpers = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    // the globals the bootstrap saw (io, os, load, debug, require) are no longer reachable: snippets get their own _ENV
    this.L = lua.lua_newthread(L);
    lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    lua.lua_sethook(this.L, (state) => this.onHook(state), lua.LUA_MASKCOUNT, HOOK_EVERY);
  }

  /** A JavaScript host function as a Lua function: its arguments marshalled in, its result pushed back. */
  private wrap(fn: (...args: LuaValue[]) => unknown): JsFunction {
    return (L) => {
      let result: unknown;
      try {
        result = fn(...readArgs(L));
      } catch (err) {
        lua.lua_pushstring(L, to_luastring(err instanceof Error ? err.message : String(err)));
        return lua.lua_error(L);
      }
      if (result === undefined) return 0;
      if (Array.isArray(result) && (result as unknown[] & { multiple?: boolean }).multiple === true) {
        for (const value of result) pushValue(L, value);
        return result.length;
      }
      pushValue(L, result);
      return 1;
    };
  }

  private onHook(L: LuaState): void {
    this.steps += HOOK_EVERY;
    if (this.steps > this.budget.instructions) this.overrun = `instruction budget exceeded (${this.budget.instructions})`;
    else if (Date.now() > this.deadline) this.overrun = `time budget exceeded (${this.budget.milliseconds} ms)`;
    else if (this.heapLimit < 0) this.heapLimit = heapInUse() + this.budget.memoryBytes;
    else if (heapInUse() > this.heapLimit) this.overrun = `memory budget exceeded (${this.budget.memoryBytes} bytes)`;
    if (this.overrun !== null) lauxlib.luaL_error(L, to_luastring(this.overrun));
  }

  /**
   * Compiles `source` (text only, never bytecode) into a function whose environment is the sandbox; the same text
   * compiles once. `env` chooses which environment: a snippet's own (`sandbox`) or none (the chunk sets `_ENV` itself).
   */
  compile(source: string, chunkName: string = source): LuaChunk {
    const cached = this.chunks.get(source);
    if (cached instanceof LuaSyntaxError) throw cached;
    if (cached !== undefined) return cached;
    const L = this.L;
    if (lauxlib.luaL_loadbufferx(L, to_luastring(source), null, to_luastring(chunkName), to_luastring('t')) !== lua.LUA_OK) {
      const error = new LuaSyntaxError(stringAt(L, -1));
      lua.lua_pop(L, 1);
      this.remember(source, error);
      throw error;
    }
    this.callHelper('sandbox_env', []);
    lua.lua_setupvalue(L, -2, 1);
    const chunk: LuaChunk = { ref: lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX), source };
    this.remember(source, chunk);
    return chunk;
  }

  /** Why `source` does not compile, or null (the admin API's check: nothing runs). */
  syntaxError(source: string): string | null {
    try {
      this.compile(source);
      return null;
    } catch (err) {
      if (err instanceof LuaSyntaxError) return err.message;
      throw err;
    }
  }

  private remember(source: string, value: LuaChunk | LuaSyntaxError): void {
    if (this.chunks.size >= CHUNK_CACHE_LIMIT) {
      const oldest = this.chunks.keys().next().value as string;
      const dropped = this.chunks.get(oldest);
      if (dropped !== undefined && !(dropped instanceof LuaSyntaxError)) lauxlib.luaL_unref(this.L, lua.LUA_REGISTRYINDEX, dropped.ref);
      this.chunks.delete(oldest);
    }
    this.chunks.set(source, value);
  }

  private startBudget(): void {
    this.steps = 0;
    this.overrun = null;
    this.deadline = Date.now() + this.budget.milliseconds;
    // the heap is measured from the first hook on: a run too short to reach it allocates too little to matter
    this.heapLimit = -1;
  }

  /** Pushes `helpers[name](...args)`'s single result onto the stack (the helpers are the sandbox's own code). */
  private callHelper(name: string, args: unknown[]): void {
    const L = this.L;
    this.startBudget();
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.helpers);
    lua.lua_getfield(L, -1, to_luastring(name));
    lua.lua_remove(L, -2);
    for (const arg of args) pushValue(L, arg);
    if (lua.lua_pcall(L, args.length, 1, 0) !== lua.LUA_OK) throw new Error(`Lua sandbox helper ${name}: ${stringAt(L, -1)}`);
  }

  /**
   * Runs a compiled chunk with `args`, within the budget; returns its first result (null for none). A Lua error is
   * thrown as a `LuaRunError` with Lua's message.
   */
  run(chunk: LuaChunk, args: readonly unknown[] = []): LuaValue {
    return this.runRef(chunk.ref, args, (L) => readValue(L, -1));
  }

  /** Like `run`, keeping a function result in the registry (Kong's snippets that return a function). */
  runKeepingFunction(chunk: LuaChunk): number | null {
    return this.runRef(chunk.ref, [], (L) => (lua.lua_type(L, -1) === lua.LUA_TFUNCTION ? (lua.lua_pushvalue(L, -1), lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX)) : null));
  }

  /** Runs a function kept by `runKeepingFunction`. */
  runFunction(ref: number): void {
    this.runRef(ref, [], () => null);
  }

  private runRef<T>(ref: number, args: readonly unknown[], read: (L: LuaState) => T): T {
    const L = this.L;
    const top = lua.lua_gettop(L);
    this.startBudget();
    try {
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
      for (const arg of args) pushValue(L, arg);
      const status = lua.lua_pcall(L, args.length, 1, 0);
      if (status !== lua.LUA_OK) {
        const message = this.overrun ?? (lua.lua_type(L, -1) === lua.LUA_TSTRING ? stringAt(L, -1) : status < 0 ? 'out of memory' : 'error object is not a string');
        throw new LuaRunError(message);
      }
      return read(L);
    } finally {
      lua.lua_settop(L, top);
    }
  }

  /** Pushes a helper's result and keeps it in the registry (template environments, shared tables). */
  keep(helper: string, args: unknown[]): number {
    this.callHelper(helper, args);
    return lauxlib.luaL_ref(this.L, lua.LUA_REGISTRYINDEX);
  }

  release(ref: number): void {
    lauxlib.luaL_unref(this.L, lua.LUA_REGISTRYINDEX, ref);
  }

  /** A new empty table kept in the registry (kong.ctx.shared of one request). */
  newTable(): number {
    lua.lua_createtable(this.L, 0, 0);
    return lauxlib.luaL_ref(this.L, lua.LUA_REGISTRYINDEX);
  }
}

/** Marks a host function result as several Lua values (`ngx.re.find` returns from, to). */
export function multiple(...values: unknown[]): unknown[] {
  return Object.assign(values, { multiple: true });
}
