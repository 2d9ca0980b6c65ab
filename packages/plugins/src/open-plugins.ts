import type { PluginDefinition, PluginResources, PluginRuntime } from './contract';
import { queuesFor } from './shared/runtime-queues';

/**
 * Opens every plugin for one data-plane node: the runtime gets its plugin queues (unless it has some) and each plugin
 * with an `init` opens what it keeps. Closing the result hands what the queues hold to their plugins once, then closes
 * what the plugins opened, in reverse order.
 */
export async function openPlugins(runtime: PluginRuntime, plugins: readonly PluginDefinition[]): Promise<PluginResources> {
  const queues = queuesFor(runtime);
  const opened: Array<{ name: string; resources: PluginResources }> = [];
  for (const plugin of plugins) if (plugin.init) opened.push({ name: plugin.name, resources: await plugin.init(runtime) });
  return {
    close: async () => {
      await queues.close();
      for (const { name, resources } of opened.reverse()) {
        try {
          await resources.close();
        } catch (err) {
          runtime.log?.error('a plugin failed to close', { plugin: name, error: err instanceof Error ? err.message : String(err) });
        }
      }
    },
  };
}
