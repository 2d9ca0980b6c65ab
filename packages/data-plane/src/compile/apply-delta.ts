import { DeltaMismatchError, type AppliedChange, type RowOf, type Service, type SnapshotDelta } from '@gatehouse/core';
import { compileUpstreams } from '../balancer/spec';
import { compileTls } from '../tls/compile-tls';
import { ConsumerLookup } from './consumer-lookup';
import { addCandidate, buildIndex, buildRouter, compile, compileRoute, orderedGroups, preparePlugin, servesHttp, SnapshotCompileError } from './compile';
import type { CompiledConfig, CompiledRoute, CompileWarning, IncrementalParts } from './types';

/** Sections whose change reloads the whole configuration from the rows (rare, small, and felt everywhere). */
const RELOAD_SECTIONS = new Set(['vaults', 'certificates', 'snis', 'ca_certificates']);

/** the rows a delta upserts in a section, of the section's row type */
function rowsOf<K extends string>(delta: SnapshotDelta, key: K): Array<RowOf<K>> {
  return (delta.changes[key]?.upsert ?? []) as Array<RowOf<K>>;
}

/**
 * Applies a delta that follows `current` (see SnapshotDelta) and returns the config to swap in. What a write changed is
 * all that is done: credential indexes and the consumer directory are updated in place, the chains of the routes a
 * plugin change reaches are resolved again, and the router is built again only when routes, services, upstreams or
 * plugins changed. Everything that can refuse the delta (a plugin config failing its schema, a route whose service is
 * missing, a hash that does not match) is checked before anything changes: a refused delta leaves `current` serving.
 */
export function applyDelta(current: CompiledConfig, delta: SnapshotDelta): CompiledConfig {
  const inc = current.incremental;
  if (!inc) throw new SnapshotCompileError('the serving config cannot take deltas');
  if (inc.broken) throw new SnapshotCompileError(`the serving config cannot take deltas: ${inc.broken}`);
  if ((delta.epoch ?? null) !== inc.state.epoch) throw new DeltaMismatchError(`delta of epoch ${delta.epoch ?? 'none'} for a config of epoch ${inc.state.epoch ?? 'none'}`);
  const touched = Object.keys(delta.changes).filter((k) => (delta.changes[k]!.upsert?.length ?? 0) + (delta.changes[k]!.delete?.length ?? 0) > 0);
  if (touched.some((k) => RELOAD_SECTIONS.has(k))) return reload(inc, delta);

  // 1. everything that may refuse the delta, before anything changes
  const state = inc.state;
  const warnings: CompileWarning[] = [];
  const prepared = new Map<string, ReturnType<typeof preparePlugin>>();
  for (const row of rowsOf(delta, 'plugins')) prepared.set(row.id, preparePlugin(row, inc.findPlugin, inc.vaults, current.consumers, warnings));
  checkRouteServices(state, delta);

  // 2. the rows (throws, changing nothing, when the delta does not lead to its announced hash)
  const changes = state.applyDelta(delta);
  try {
    return follow(current, inc, delta, changes, prepared, warnings, new Set(touched));
  } catch (err) {
    inc.broken = (err as Error).message;
    throw err;
  }
}

/** Routes must keep their service: one the delta removes, or that a route of the delta names, must exist after it. */
function checkRouteServices(state: IncrementalParts['state'], delta: SnapshotDelta): void {
  const deletedServices = new Set(delta.changes.services?.delete ?? []);
  const upsertedServices = new Set(rowsOf(delta, 'services').map((s) => s.id));
  const deletedRoutes = new Set(delta.changes.routes?.delete ?? []);
  const serviceExists = (id: string) => upsertedServices.has(id) || (!deletedServices.has(id) && state.get('services', id) !== undefined);
  for (const route of rowsOf(delta, 'routes')) {
    if (route.service && servesHttp(route) && !serviceExists(route.service.id)) {
      throw new SnapshotCompileError(`route ${route.id} references missing service ${route.service.id}`);
    }
  }
  if (deletedServices.size === 0) return;
  const upsertedRoutes = new Set(rowsOf(delta, 'routes').map((r) => r.id));
  for (const route of state.section('routes').values()) {
    if (upsertedRoutes.has(route.id) || deletedRoutes.has(route.id)) continue;
    if (route.service && deletedServices.has(route.service.id) && servesHttp(route)) {
      throw new SnapshotCompileError(`route ${route.id} references missing service ${route.service.id}`);
    }
  }
}

function follow(
  current: CompiledConfig,
  inc: IncrementalParts,
  delta: SnapshotDelta,
  changes: AppliedChange[],
  prepared: Map<string, ReturnType<typeof preparePlugin>>,
  newWarnings: CompileWarning[],
  touched: Set<string>,
): CompiledConfig {
  const state = inc.state;
  let allRoutes = false;
  const affectedRoutes = new Set<string>();
  const affectedServices = new Set<string>();
  const changedPluginIds = new Set<string>();
  const changedGroups = new Set<string>();

  for (const change of changes) {
    if (change.key === 'consumers') {
      if (current.consumers instanceof ConsumerLookup) current.consumers.follow(change);
    } else if (change.key === 'plugins') {
      changedPluginIds.add(change.id);
      for (const plugin of [change.before, change.after]) {
        if (!plugin) continue;
        changedGroups.add(plugin.name);
        if (plugin.route) affectedRoutes.add(plugin.route.id);
        else if (plugin.service) affectedServices.add(plugin.service.id);
        else allRoutes = true;
      }
      if (change.before) inc.groups.get(change.before.name)?.candidates.delete(change.id);
      const next = prepared.get(change.id);
      if (change.after && next) addCandidate(inc.groups, next);
    } else if (change.key === 'routes') affectedRoutes.add(change.id);
    else if (change.key === 'services') affectedServices.add(change.id);
  }

  const indexes = current.indexes as Map<string, unknown>;
  if (followIndexes(inc, indexes, changes, changedGroups, touched)) allRoutes = true;

  let upstreams = current.upstreams;
  let tls = current.tls;
  if (touched.has('upstreams') || touched.has('targets') || touched.has('services')) {
    upstreams = compileUpstreams({ upstreams: state.list('upstreams'), targets: state.list('targets'), services: state.list('services') });
    allRoutes = true;
  }
  if (touched.has('services')) {
    const services = state.list('services');
    const material = { certificates: state.list('certificates'), snis: state.list('snis'), ca_certificates: state.list('ca_certificates') };
    tls = compileTls(material, services, inc.vaults);
    allRoutes = true;
  }

  let routes = current.routes;
  let router = current.router;
  if (allRoutes || affectedRoutes.size > 0 || affectedServices.size > 0) {
    const reached = (route: CompiledRoute['route']) =>
      allRoutes || affectedRoutes.has(route.id) || (route.service !== null && route.service !== undefined && affectedServices.has(route.service.id));
    routes = recompileRoutes(current, inc, indexes, reached, upstreams, tls);
    router = buildRouter(routes);
  }

  const warnings =
    changedPluginIds.size > 0 ? [...current.warnings.filter((w) => !changedPluginIds.has(w.plugin_id)), ...newWarnings] : current.warnings;
  return {
    ...current,
    version: delta.version,
    hash: delta.hash,
    createdAt: delta.created_at,
    router,
    routes,
    warnings,
    upstreams,
    tls,
  };
}

/**
 * Indexes follow the rows: plugin names without configurations left lose theirs, new names get one, and the others
 * are updated in place where the plugin can (else built again). True when chains must be resolved again for every
 * route (their steps hold the index objects).
 */
function followIndexes(inc: IncrementalParts, indexes: Map<string, unknown>, changes: AppliedChange[], changedGroups: Set<string>, touched: Set<string>): boolean {
  const state = inc.state;
  let allRoutes = false;
  let view: ReturnType<typeof state.toConfig> | null = null;
  const config = () => (view ??= state.toConfig());
  const rows = (section: string, id: string) => state.get(section, id);
  const fresh = new Set<string>();
  for (const name of changedGroups) {
    const group = inc.groups.get(name);
    if (group && group.candidates.size === 0) {
      inc.groups.delete(name);
      indexes.delete(name);
      allRoutes = true;
    } else if (group && group.def.compile && !indexes.has(name)) {
      indexes.set(name, buildIndex(group.def, config()));
      fresh.add(name);
      allRoutes = true;
    }
  }
  for (const [name, group] of inc.groups) {
    const def = group.def;
    if (!def.compile || !indexes.has(name) || fresh.has(name)) continue;
    const sections = def.indexSections;
    if (sections && !sections.some((s) => touched.has(s))) continue;
    const relevant = sections ? changes.filter((c) => sections.includes(c.key)) : changes;
    if (def.updateIndex && def.updateIndex(indexes.get(name), relevant, rows)) continue;
    indexes.set(name, buildIndex(def, config()));
    allRoutes = true; // chain steps hold the index object
  }
  return allRoutes;
}

/** The routes in order: those `reached` compiled again, the others kept as they were. */
function recompileRoutes(
  current: CompiledConfig,
  inc: IncrementalParts,
  indexes: Map<string, unknown>,
  reached: (route: CompiledRoute['route']) => boolean,
  upstreams: CompiledConfig['upstreams'],
  tls: CompiledConfig['tls'],
): CompiledRoute[] {
  const state = inc.state;
  const services: ReadonlyMap<string, Service> = state.section('services');
  const ordered = orderedGroups(inc.groups);
  const byId = new Map(current.routes.map((r) => [r.route.id, r]));
  const next: CompiledRoute[] = [];
  for (const route of state.list('routes')) {
    const kept = reached(route) ? undefined : byId.get(route.id);
    if (kept) {
      next.push(kept);
      continue;
    }
    const compiled = compileRoute(route, services, ordered, indexes, upstreams, tls);
    if (compiled) next.push(compiled);
  }
  return next;
}

/** A delta touching vaults or TLS material: the rows follow it, and the whole configuration is compiled from them. */
function reload(inc: IncrementalParts, delta: SnapshotDelta): CompiledConfig {
  inc.state.applyDelta(delta);
  try {
    return compile(inc.state.toSnapshot(), { findPlugin: inc.findPlugin, env: inc.env });
  } catch (err) {
    inc.broken = (err as Error).message;
    throw err;
  }
}
