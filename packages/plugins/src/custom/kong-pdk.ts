import type { PluginContext, PluginDefinition, PluginLogger, PluginResponse, UpstreamResponse } from '../contract';
import { definePlugin } from '../contract';
import { newExchange, type PdkExchange, type PdkPhase } from '../pdk/exchange';
import { kongFor } from './kong-pdk-api';
import { recordSchema } from './kong-schema';

/**
 * A plugin written for Kong's JavaScript plugin server (`kong-pdk`: a module exporting `Plugin`, `Schema`, `Version`,
 * `Priority`), run in-process over the same PDK subset as Lua snippets: `kong.request.getHeader(…)` is the PDK's
 * `kong.request.get_header`, every call answering a promise as kong-pdk's do. `Plugin` is constructed once per
 * configuration; its `rewrite`, `access`, `response` and `log` methods run in those phases (`rewrite` for the global
 * configuration only, as Kong runs it).
 */

export interface KongPdkModule {
  Plugin: new (config: Record<string, unknown>) => Partial<Record<'rewrite' | 'access' | 'response' | 'log', (kong: unknown) => unknown>>;
  Schema?: Array<Record<string, unknown>>;
  Version?: string;
  Priority?: number;
}

export function isKongPdkModule(mod: unknown): mod is KongPdkModule {
  return typeof mod === 'object' && mod !== null && typeof (mod as { Plugin?: unknown }).Plugin === 'function';
}

export function kongPdkPlugin(name: string, mod: KongPdkModule): PluginDefinition<Record<string, unknown>, null> {
  const instances = new WeakMap<object, InstanceType<KongPdkModule['Plugin']>>();
  const instance = (config: Record<string, unknown>) => {
    let found = instances.get(config);
    if (found === undefined) {
      found = new mod.Plugin(config);
      instances.set(config, found);
    }
    return found;
  };
  const logger = (ctx: PluginContext): PluginLogger => ctx.runtime.log ?? { error: (m, d) => process.stderr.write(`${JSON.stringify({ level: 'error', message: m, ...d })}\n`) };
  const phase = async (ctx: PluginContext, config: Record<string, unknown>, method: 'rewrite' | 'access' | 'log', kind: PdkPhase, extra: Partial<PdkExchange> = {}): Promise<PluginResponse | null> => {
    const plugin = instance(config);
    const fn = plugin[method];
    if (fn === undefined) return null;
    const ex = newExchange(ctx, kind, name, logger(ctx), extra);
    await fn.call(plugin, kongFor(ex));
    return ex.exit;
  };
  const proto = mod.Plugin.prototype as Record<string, unknown>;
  return definePlugin<Record<string, unknown>, null>({
    name,
    priority: mod.Priority ?? 0,
    version: mod.Version ?? '0.1.0',
    configSchema: recordSchema((mod.Schema ?? []) as never),
    auth: false,
    noConsumer: false,
    // the rewrite method runs for the global configuration only, before the route's plugins (Kong's rewrite phase)
    ...(typeof proto.rewrite === 'function' ? { rewrite: async (ctx: PluginContext, config: Record<string, unknown>) => (await phase(ctx, config, 'rewrite', 'rewrite')) ?? undefined } : {}),
    ...(typeof proto.access === 'function' ? { access: async (ctx: PluginContext, config: Record<string, unknown>) => (await phase(ctx, config, 'access', 'access')) ?? undefined } : {}),
    ...(typeof proto.response === 'function'
      ? {
          response: (ctx: PluginContext, config: Record<string, unknown>, res: UpstreamResponse) => {
            // header changes only: the response hook cannot wait, so what the method does synchronously counts
            const ex = newExchange(ctx, 'header_filter', name, logger(ctx), { response: res });
            void Promise.resolve(instance(config).response!.call(instance(config), kongFor(ex))).catch((err: unknown) => logger(ctx).error('plugin failed', { plugin: name, error: String(err) }));
          },
        }
      : {}),
    ...(typeof proto.log === 'function' ? { log: async (ctx: PluginContext, config: Record<string, unknown>, summary) => void (await phase(ctx, config, 'log', 'log', { summary })) } : {}),
  });
}
