import { z } from 'zod';
import { luaSandbox } from '../pdk/lua/sandbox';
import { UNTRUSTED_LUA_OFF_MESSAGE, untrustedLua } from '../pdk/lua/untrusted-lua';

/** The phases a serverless plugin runs snippets in, in Kong's order. */
export const SERVERLESS_PHASES = ['certificate', 'rewrite', 'access', 'header_filter', 'body_filter', 'log'] as const;
export type ServerlessPhase = (typeof SERVERLESS_PHASES)[number];

/** Lua's parse message as LuaJIT words it (Kong's messages quote `'<eof>'`). */
function kongWording(message: string): string {
  return message.replace(/ near <eof>$/, " near '<eof>'");
}

/**
 * One phase's snippets (Kong's `phase_functions`): an array of Lua chunks, each parsed (never run) when the plugin
 * is created, refused with `error parsing <plugin>: <Lua's message>` at its index (every one, with `untrusted_lua = off`).
 */
function phaseFunctions(pluginName: string) {
  return z
    .array(
      z.string().superRefine((source, ctx) => {
        if (untrustedLua().mode === 'off') return ctx.addIssue({ code: 'custom', message: `error parsing ${pluginName}: ${UNTRUSTED_LUA_OFF_MESSAGE}` });
        const error = luaSandbox().syntaxError(source);
        if (error !== null) ctx.addIssue({ code: 'custom', message: `error parsing ${pluginName}: ${kongWording(error)}` });
      }),
    )
    .default([]);
}

/** Kong's `_schema.lua` for pre-function and post-function. */
export function serverlessConfigSchema(pluginName: string) {
  return z
    .object({
      certificate: phaseFunctions(pluginName),
      rewrite: phaseFunctions(pluginName),
      access: phaseFunctions(pluginName),
      header_filter: phaseFunctions(pluginName),
      body_filter: phaseFunctions(pluginName),
      log: phaseFunctions(pluginName),
    })
    .strict();
}

export type ServerlessConfig = z.infer<ReturnType<typeof serverlessConfigSchema>>;

/** Kong's entity check: at least one phase has a snippet. */
export function checkServerlessConfig(config: ServerlessConfig): Record<string, string[]> | null {
  if (SERVERLESS_PHASES.some((phase) => config[phase].length > 0)) return null;
  const fields = SERVERLESS_PHASES.map((phase) => `'config.${phase}'`).join(', ');
  return { '@entity': [`at least one of these fields must be non-empty: ${fields}`] };
}
