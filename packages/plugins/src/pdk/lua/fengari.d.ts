/** The part of fengari's C-like API (Lua 5.3 in JavaScript) the sandbox uses. */
declare module 'fengari' {
  export type LuaState = { readonly __luaState: unique symbol };
  export type LuaString = Uint8Array;
  export type JsFunction = (L: LuaState) => number;
  export type Hook = (L: LuaState, ar: unknown) => void;

  export const lua: {
    LUA_OK: number;
    LUA_REGISTRYINDEX: number;
    LUA_MASKCOUNT: number;
    LUA_MULTRET: number;
    LUA_TNIL: number;
    LUA_TBOOLEAN: number;
    LUA_TLIGHTUSERDATA: number;
    LUA_TNUMBER: number;
    LUA_TSTRING: number;
    LUA_TTABLE: number;
    LUA_TFUNCTION: number;
    lua_createtable(L: LuaState, narr: number, nrec: number): void;
    lua_error(L: LuaState): number;
    lua_getfield(L: LuaState, index: number, key: LuaString): number;
    lua_getglobal(L: LuaState, name: LuaString): number;
    lua_gettop(L: LuaState): number;
    lua_isinteger(L: LuaState, index: number): boolean;
    lua_newthread(L: LuaState): LuaState;
    lua_next(L: LuaState, index: number): number;
    lua_pcall(L: LuaState, nargs: number, nresults: number, errfunc: number): number;
    lua_pop(L: LuaState, n: number): void;
    lua_pushboolean(L: LuaState, b: boolean): void;
    lua_pushinteger(L: LuaState, n: number): void;
    lua_pushjsfunction(L: LuaState, fn: JsFunction): void;
    lua_pushlightuserdata(L: LuaState, p: object): void;
    lua_pushnil(L: LuaState): void;
    lua_pushnumber(L: LuaState, n: number): void;
    lua_pushstring(L: LuaState, s: LuaString): void;
    lua_pushvalue(L: LuaState, index: number): void;
    lua_rawgeti(L: LuaState, index: number, n: number): number;
    lua_rawlen(L: LuaState, index: number): number;
    lua_rawset(L: LuaState, index: number): void;
    lua_rawseti(L: LuaState, index: number, n: number): void;
    lua_remove(L: LuaState, index: number): void;
    lua_setfield(L: LuaState, index: number, key: LuaString): void;
    lua_setglobal(L: LuaState, name: LuaString): void;
    lua_sethook(L: LuaState, hook: Hook | null, mask: number, count: number): void;
    lua_settop(L: LuaState, index: number): void;
    lua_setupvalue(L: LuaState, funcindex: number, n: number): LuaString | null;
    lua_toboolean(L: LuaState, index: number): boolean;
    lua_tointeger(L: LuaState, index: number): number;
    lua_tojsstring(L: LuaState, index: number): string;
    lua_tonumber(L: LuaState, index: number): number;
    lua_tostring(L: LuaState, index: number): LuaString | null;
    lua_touserdata(L: LuaState, index: number): unknown;
    lua_type(L: LuaState, index: number): number;
  };

  export const lauxlib: {
    luaL_newstate(): LuaState;
    luaL_loadbufferx(L: LuaState, buff: LuaString, size: number | null, name: LuaString, mode: LuaString | null): number;
    luaL_ref(L: LuaState, t: number): number;
    luaL_unref(L: LuaState, t: number, ref: number): void;
    luaL_error(L: LuaState, fmt: LuaString): number;
  };

  export const lualib: {
    luaL_openlibs(L: LuaState): void;
  };

  export function to_luastring(s: string, cache?: boolean): LuaString;
  export function to_jsstring(s: LuaString, from?: number, to?: number, replacement_char?: boolean): string;
}
