import { existsSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { registerPlugin } from '../bundled';
import type { PluginDefinition } from '../contract';
import { isKongPdkModule, kongPdkPlugin } from './kong-pdk';

/**
 * Kong's `plugins` setting as `GATEHOUSE_PLUGINS`: `bundled` (the default) plus custom plugins, each an npm package
 * name or a path (absolute, or relative to `baseDir`). A module exports Gatehouse's plugin contract (a
 * `PluginDefinition` as `default` or `plugin`), or a `kong-pdk` plugin (`Plugin`, `Schema`, `Version`, `Priority`;
 * named after its file or package). Returns the names loaded.
 */
export async function loadCustomPlugins(setting: string | undefined, baseDir: string): Promise<string[]> {
  const entries = (setting ?? 'bundled').split(',').map((s) => s.trim()).filter((s) => s !== '' && s !== 'bundled');
  const loaded: string[] = [];
  for (const entry of entries) {
    const isPath = entry.startsWith('.') || isAbsolute(entry);
    const target = isPath ? pathToFileURL(moduleFile(resolve(baseDir, entry))).href : pathToFileURL(createRequire(join(baseDir, 'index.js')).resolve(entry)).href;
    const mod = (await import(target)) as Record<string, unknown>;
    const def = pluginOf(mod, isPath ? basename(entry).replace(/\.[cm]?[jt]s$/, '') : entry);
    if (def === null) throw new Error(`GATEHOUSE_PLUGINS: '${entry}' exports neither a Gatehouse plugin nor a kong-pdk plugin`);
    registerPlugin(def);
    loaded.push(def.name);
  }
  return loaded;
}

/** A path's module: the file itself, or a folder's index (TypeScript or JavaScript). */
function moduleFile(path: string): string {
  if (existsSync(path) && statSync(path).isFile()) return path;
  for (const index of ['index.ts', 'index.js', 'index.mjs', 'index.cjs']) if (existsSync(join(path, index))) return join(path, index);
  throw new Error(`GATEHOUSE_PLUGINS: no plugin module at ${path}`);
}

function isDefinition(value: unknown): value is PluginDefinition {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string' && typeof (value as { priority?: unknown }).priority === 'number' && typeof (value as { configSchema?: unknown }).configSchema === 'object';
}

function pluginOf(mod: Record<string, unknown>, name: string): PluginDefinition | null {
  for (const candidate of [mod.plugin, mod.default, (mod.default as Record<string, unknown> | undefined)?.plugin]) if (isDefinition(candidate)) return candidate;
  for (const candidate of [mod.default, mod]) if (isKongPdkModule(candidate)) return kongPdkPlugin(name, candidate) as PluginDefinition;
  return null;
}
