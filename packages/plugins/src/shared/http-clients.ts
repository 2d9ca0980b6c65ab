import type { Dispatcher } from 'undici';
import type { PluginResources } from '../contract';
import { runtimeState, type RuntimeState } from './runtime-state';

/**
 * The HTTP connection pools one plugin opened on one data-plane node, one per distinct connection setting (TLS check,
 * keep-alive, forward proxy), shared by every configuration with the same setting and closed when the node stops.
 */
export class HttpClients implements PluginResources {
  private readonly pools = new Map<string, Dispatcher>();

  /** the pool for `key`, built by `open` the first time */
  get(key: string, open: () => Dispatcher): Dispatcher {
    let pool = this.pools.get(key);
    if (pool === undefined) this.pools.set(key, (pool = open()));
    return pool;
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.close().catch(() => undefined)));
  }
}

/** A plugin's pools per node: give `init` to the plugin definition, and find them in hooks with `of(ctx.runtime)`. */
export function httpClients(): RuntimeState<HttpClients> {
  return runtimeState(() => new HttpClients());
}
