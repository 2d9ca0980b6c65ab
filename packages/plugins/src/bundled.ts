import type { PluginDefinition } from './contract';
import { keyAuth } from './key-auth';

/** Every bundled plugin, one line each. */
export const bundledPlugins: PluginDefinition[] = [keyAuth];

const byName = new Map(bundledPlugins.map((p) => [p.name, p]));
export function findPlugin(name: string): PluginDefinition | undefined {
  return byName.get(name);
}
