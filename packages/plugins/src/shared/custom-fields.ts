import { z } from 'zod';
import type { ExchangeSummary, PluginContext } from '../contract';
import { newExchange } from '../pdk/exchange';
import { luaSandbox } from '../pdk/lua/sandbox';
import { UNTRUSTED_LUA_OFF_MESSAGE, untrustedLua } from '../pdk/lua/untrusted-lua';

/**
 * Kong's `custom_fields_by_lua` (typedef `lua_code`): field name → a Lua chunk. The chunk is parsed when the plugin is
 * created (never run: `Error parsing function: …` when it does not compile); at log time it runs in the sandbox with
 * the PDK subset and what it returns becomes the field (a dotted name reaches into the entry; nil removes it).
 */
export const customFieldsByLua = z
  .record(
    z.string().min(1),
    z
      .string()
      .min(1)
      .superRefine((source, ctx) => {
        if (untrustedLua().mode === 'off') return ctx.addIssue({ code: 'custom', message: `Error parsing function: ${UNTRUSTED_LUA_OFF_MESSAGE}` });
        const error = luaSandbox().syntaxError(source);
        if (error !== null) ctx.addIssue({ code: 'custom', message: `Error parsing function: ${error}` });
      }),
  )
  .nullable()
  .default(null);

/** The custom fields' values for one finished exchange, in the config's order (null: remove the field). */
export function customFieldValues(ctx: PluginContext, fields: Record<string, string> | null, summary: ExchangeSummary, plugin: string): Map<string, unknown> | null {
  if (fields === null) return null;
  const entries = Object.entries(fields);
  if (entries.length === 0) return null;
  const sandbox = luaSandbox();
  const log = ctx.runtime.log ?? { error: () => undefined };
  const ex = newExchange(ctx, 'log', plugin, log, { summary });
  const values = new Map<string, unknown>();
  for (const [key, source] of entries) {
    try {
      values.set(key, sandbox.evaluate(sandbox.compile(source), ex));
    } catch (err) {
      log.error(`${plugin}: custom_fields_by_lua '${key}' failed`, { plugin, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return values;
}

/** Sets (or, for null, removes) `value` at a dotted `key` of `entry`, creating tables on the way (Kong's set mode). */
export function setSerializeValue(entry: Record<string, unknown>, key: string, value: unknown): void {
  const path = key.split('.');
  let node: Record<string, unknown> = entry;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (next === undefined || next === null) node[part] = {};
    else if (typeof next !== 'object' || Array.isArray(next)) return;
    node = node[part] as Record<string, unknown>;
  }
  const last = path[path.length - 1]!;
  if (value === null || value === undefined) delete node[last];
  else node[last] = value;
}
