import type { Express } from 'express';
import type { PluginDefinition } from '@gatehouse/plugins';
import { adminShell, type AdminShellOptions } from '../http/admin-shell';
import type { AdminLogger } from '../http/errors';
import type { ResourceRegistry } from '../http/resources';
import type { ServerCounters } from '../routes/root';
import { mountDeclarativeConfigRoutes } from './config-routes';
import type { DeclarativeSource } from './declarative-source';
import { mountDeclarativeNodeRoutes, mountDeclarativeSchemaRoutes } from './node-routes';
import { mountReadRoutes } from './read-routes';
import { mountDeclarativeTagRoutes } from './tag-routes';

export interface DeclarativeAdminDeps extends AdminShellOptions {
  source: DeclarativeSource;
  plugins: PluginDefinition[];
  version: string;
  log: AdminLogger;
  /** modules that add routes needing no database (the clustering view of a control plane) */
  extensions?: Array<(ctx: { resources: ResourceRegistry }) => void>;
}

export interface DeclarativeAdminApp extends Express {
  locals: Express['locals'] & { counters: ServerCounters; resources: ResourceRegistry };
}

/**
 * The admin API of a node without a database (Kong's `database = off`): the same request path, node information and
 * error shapes as the database-backed one; reads come from the configuration in memory, `POST /config` replaces it
 * whole, and every other write answers 405 with Kong's message.
 */
export function createDeclarativeAdminApp(deps: DeclarativeAdminDeps): DeclarativeAdminApp {
  const { app, resources, counters, node, finish } = adminShell<DeclarativeAdminApp>({ ...deps, bodyLimit: undefined, middleware: undefined });
  app.locals.counters = counters;
  app.locals.resources = resources;
  const kinds = deps.source.state.kinds;
  mountDeclarativeNodeRoutes(resources, node, deps.plugins, deps.source);
  mountDeclarativeSchemaRoutes(resources, kinds, deps.plugins);
  mountDeclarativeConfigRoutes(resources, deps.source);
  for (const extension of deps.extensions ?? []) extension({ resources });
  mountDeclarativeTagRoutes(resources, () => deps.source.state);
  mountReadRoutes(resources, kinds, () => deps.source.state);
  return finish(deps.log);
}
