import type { Plugin } from '@gatehouse/core';
import type { PluginInstance } from './types';

/**
 * Kong's scope precedence (kong/runloop/plugins_iterator.lua): for one plugin name, the most specific enabled
 * configuration runs. Higher rank wins:
 *   route+service+consumer 7 > route+consumer 6 > service+consumer 5 > route+service 4 > consumer 3 > route 2 >
 *   service 1 > global 0.
 * Every rank with a consumer beats every rank without one, so a request resolves as
 * "the consumer's best configuration if it has one, else the best configuration without a consumer".
 */
export function scopeRank(plugin: Pick<Plugin, 'route' | 'service' | 'consumer'>): number {
  const r = plugin.route !== null;
  const s = plugin.service !== null;
  const c = plugin.consumer !== null;
  if (r && s && c) return 7;
  if (r && c) return 6;
  if (s && c) return 5;
  if (r && s) return 4;
  if (c) return 3;
  if (r) return 2;
  if (s) return 1;
  return 0;
}

/** Whether a configuration applies to a route (and its service, which may be null). */
export function appliesTo(plugin: Pick<Plugin, 'route' | 'service'>, routeId: string, serviceId: string | null): boolean {
  if (plugin.route !== null && plugin.route.id !== routeId) return false;
  if (plugin.service !== null && plugin.service.id !== serviceId) return false;
  return true;
}

export interface ScopedInstance {
  row: Pick<Plugin, 'route' | 'service' | 'consumer'>;
  instance: PluginInstance;
  rank: number;
}

export interface ResolvedScope {
  base: PluginInstance | null;
  byConsumer: Map<string, PluginInstance> | null;
}

/**
 * The candidates of one plugin name for one route: the best configuration without a consumer, and per consumer the
 * best consumer-scoped one. `candidates` must be enabled configurations only (a disabled one never shadows). Equal
 * ranks cannot both exist (the control plane keeps (name, route, service, consumer) unique); the first one wins.
 */
export function resolveScope(candidates: readonly ScopedInstance[], routeId: string, serviceId: string | null): ResolvedScope {
  let base: ScopedInstance | null = null;
  let byConsumer: Map<string, ScopedInstance> | null = null;
  for (const candidate of candidates) {
    if (!appliesTo(candidate.row, routeId, serviceId)) continue;
    const consumer = candidate.row.consumer;
    if (consumer === null) {
      if (base === null || candidate.rank > base.rank) base = candidate;
      continue;
    }
    byConsumer ??= new Map();
    const seen = byConsumer.get(consumer.id);
    if (seen === undefined || candidate.rank > seen.rank) byConsumer.set(consumer.id, candidate);
  }
  return {
    base: base?.instance ?? null,
    byConsumer: byConsumer ? new Map([...byConsumer].map(([id, c]) => [id, c.instance])) : null,
  };
}
