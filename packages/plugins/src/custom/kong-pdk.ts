import type { PluginContext, PluginDefinition, PluginLogger, PluginResponse, UpstreamResponse } from '../contract';
import { definePlugin } from '../contract';
import { newExchange, type PdkExchange, type PdkPhase } from '../pdk/exchange';
import { requestHost } from '../pdk/lua/host-request';
import { responseHost } from '../pdk/lua/host-response';
import type { LuaValue } from '../pdk/lua/marshal';
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

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The PDK's host functions, made once; each call is bound to its exchange for its (synchronous) duration. */
class BoundHost {
  private current: PdkExchange | null = null;
  private readonly host = { ...requestHost(() => this.exchange()), ...responseHost(() => this.exchange()) };

  private exchange(): PdkExchange {
    if (this.current === null) throw new Error('the PDK is only available while a request is handled');
    return this.current;
  }

  has(name: string): boolean {
    return this.host[name] !== undefined;
  }

  call(ex: PdkExchange, name: string, args: unknown[]): unknown {
    const previous = this.current;
    this.current = ex;
    try {
      return this.host[name]!(...(args as LuaValue[]));
    } finally {
      this.current = previous;
    }
  }
}

const boundHost = new BoundHost();

/** The `kong` object one phase of one request sees: nested names resolve to the PDK's host functions. */
function kongFor(ex: PdkExchange): unknown {
  const log = (level: string) => (...parts: unknown[]) => Promise.resolve(boundHost.call(ex, 'log', [level, parts.map(String).join(' ')]));
  const shared = new Map<string, unknown>();
  const node = (path: string[]): unknown =>
    new Proxy(() => undefined, {
      get: (_, key) => {
        if (typeof key !== 'string') return undefined;
        if (path.length === 1 && path[0] === 'log') return log(key);
        if (path.length === 1 && path[0] === 'ctx' && key === 'shared') return shared;
        return node([...path, key]);
      },
      apply: (_, __, args: unknown[]) => {
        const name = [...path.slice(0, -1), snake(path[path.length - 1]!)].join('_');
        if (!boundHost.has(name)) return Promise.reject(new Error(`unsupported function: kong.${path.join('.')}`));
        // the body is read when asked for (the calls are promises), so other requests keep streaming theirs
        if ((name === 'request_get_raw_body' || name === 'request_get_body') && ex.requestBody === null && ex.phase !== 'log') {
          return ex.ctx.req.readBody().then((body) => {
            ex.requestBody = body;
            return boundHost.call(ex, name, args);
          });
        }
        try {
          return Promise.resolve(boundHost.call(ex, name, args));
        } catch (err) {
          return Promise.reject(err);
        }
      },
    });
  return node([]);
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
    const fn = instance(config)[method];
    if (fn === undefined) return null;
    const ex = newExchange(ctx, kind, name, logger(ctx), extra);
    await fn.call(instance(config), kongFor(ex));
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
