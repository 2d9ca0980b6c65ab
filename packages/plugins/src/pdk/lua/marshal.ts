import { lua, to_jsstring, to_luastring, type LuaState } from 'fengari';

/** A value as it crosses between JavaScript and Lua: tables become arrays (sequences) or plain objects. */
export type LuaValue = null | boolean | number | string | LuaValue[] | { [key: string]: LuaValue } | LuaTableRef;

/** A Lua table kept in the registry (kong.ctx.shared), pushed back as the same table. */
export class LuaTableRef {
  constructor(readonly ref: number) {}
}

const MAX_DEPTH = 32;

/** Pushes a JavaScript value; objects and arrays become fresh tables (deeply, up to MAX_DEPTH). */
export function pushValue(L: LuaState, value: unknown, depth = 0): void {
  if (value === null || value === undefined) lua.lua_pushnil(L);
  else if (typeof value === 'string') lua.lua_pushstring(L, to_luastring(value));
  else if (typeof value === 'number') {
    if (Number.isInteger(value)) lua.lua_pushinteger(L, value);
    else lua.lua_pushnumber(L, value);
  } else if (typeof value === 'boolean') lua.lua_pushboolean(L, value);
  else if (value instanceof LuaTableRef) lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, value.ref);
  else if (Buffer.isBuffer(value)) lua.lua_pushstring(L, new Uint8Array(value));
  else if (value instanceof Map) {
    lua.lua_createtable(L, 0, value.size);
    for (const [key, item] of value as Map<unknown, unknown>) {
      pushValue(L, key, depth + 1);
      pushValue(L, item, depth + 1);
      lua.lua_rawset(L, -3);
    }
  } else if (Array.isArray(value)) {
    lua.lua_createtable(L, value.length, 0);
    if (depth >= MAX_DEPTH) return;
    value.forEach((item, i) => {
      pushValue(L, item, depth + 1);
      lua.lua_rawseti(L, -2, i + 1);
    });
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    lua.lua_createtable(L, 0, entries.length);
    if (depth >= MAX_DEPTH) return;
    for (const [key, item] of entries) {
      if (item === undefined) continue;
      lua.lua_pushstring(L, to_luastring(key));
      pushValue(L, item, depth + 1);
      lua.lua_rawset(L, -3);
    }
  } else lua.lua_pushnil(L);
}

/** Lua's string for a string value (bytes as UTF-8, invalid sequences replaced). */
export function stringAt(L: LuaState, index: number): string {
  const bytes = lua.lua_tostring(L, index);
  return bytes === null ? '' : to_jsstring(bytes, undefined, undefined, true);
}

/** Reads the value at `index`; functions and userdata read as null, tables by `readTable`. */
export function readValue(L: LuaState, index: number, depth = 0): LuaValue {
  switch (lua.lua_type(L, index)) {
    case lua.LUA_TBOOLEAN:
      return lua.lua_toboolean(L, index);
    case lua.LUA_TNUMBER:
      return lua.lua_isinteger(L, index) ? lua.lua_tointeger(L, index) : lua.lua_tonumber(L, index);
    case lua.LUA_TSTRING:
      return stringAt(L, index);
    case lua.LUA_TTABLE:
      return depth >= MAX_DEPTH ? null : readTable(L, index, depth);
    default:
      return null;
  }
}

/** A table with keys 1..n only reads as an array (cjson's rule); any other as an object with string keys. */
function readTable(L: LuaState, index: number, depth: number): LuaValue {
  const at = index < 0 ? lua.lua_gettop(L) + index + 1 : index;
  const entries: Array<[string | number, LuaValue]> = [];
  lua.lua_pushnil(L);
  while (lua.lua_next(L, at) !== 0) {
    const keyType = lua.lua_type(L, -2);
    const key = keyType === lua.LUA_TNUMBER ? lua.lua_tonumber(L, -2) : keyType === lua.LUA_TSTRING ? stringAt(L, -2) : null;
    if (key !== null) entries.push([key, readValue(L, -1, depth + 1)]);
    lua.lua_pop(L, 1);
  }
  const isArray = entries.length > 0 && entries.every(([key]) => typeof key === 'number' && Number.isInteger(key) && key >= 1 && key <= entries.length);
  if (isArray) {
    const array: LuaValue[] = new Array<LuaValue>(entries.length);
    for (const [key, value] of entries) array[(key as number) - 1] = value;
    return array;
  }
  const object: Record<string, LuaValue> = {};
  for (const [key, value] of entries) object[String(key)] = value;
  return object;
}

/** The arguments a JavaScript function was called with, from the Lua stack. */
export function readArgs(L: LuaState): LuaValue[] {
  const count = lua.lua_gettop(L);
  const args: LuaValue[] = [];
  for (let i = 1; i <= count; i++) args.push(readValue(L, i));
  return args;
}
