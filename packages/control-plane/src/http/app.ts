import type { Express } from 'express';
import { bundledPlugins, type PluginDefinition } from '@gatehouse/plugins';
import type { RouterFlavor } from '@gatehouse/core';
import type { Database } from '../db/open-database';
import { mountDeclarativeRoutes } from '../declarative/routes';
import { mountApiRoutes } from '../routes/apis';
import { mountEntityRoutes } from '../routes/entity-routes';
import { mountOpenApiRoute } from '../routes/openapi';
import { mountPluginRoutes } from '../routes/plugins';
import { mountRootRoutes, type ServerCounters } from '../routes/root';
import { mountSchemaRoutes } from '../routes/schemas';
import { mountTagRoutes } from '../routes/tags';
import { EntityService } from '../service/entity-service';
import { registerDefaultKinds } from '../service/default-kinds';
import { ConfigStore } from '../store/config-store';
import { adminShell, type AdminShellOptions } from './admin-shell';
import type { AdminContext } from './context';
import type { AdminLogger } from './errors';
import type { HealthChannel } from '@gatehouse/sync';
import { mountUpstreamRoutes } from '../upstreams/routes';
import { mountLogLevelRoutes, type LogLevelControl } from '../operations/log-level-routes';
import { mountNodeRoutes } from '../operations/node-routes';
import { mountClientCertificateRoutes } from '../routes/client-certificate';

export { KONG_COMPATIBLE_VERSION } from './admin-shell';

export interface AdminAppDeps extends AdminShellOptions {
  /** an opened (migrated) database */
  database: Database;
  /** called after each committed admin write with the new config version */
  onCommitted?: (version: number | null) => void | Promise<void>;
  /** plugins installed on this node; default: every bundled plugin */
  plugins?: PluginDefinition[];
  /** Kong's `router_flavor`; default `traditional_compatible` */
  routerFlavor?: RouterFlavor;
  /** modules that add entities or routes (keys, RBAC, …); they run after the core routes are mounted */
  extensions?: Array<(ctx: AdminContext) => void>;
  log?: AdminLogger;
  /** the node's log level and the bus that carries changes to other nodes (Kong's /debug/…/log-level paths) */
  logLevel?: LogLevelControl;
  /** target health reported by data planes, and manual health changes sent to them (upstreams' /health) */
  health?: HealthChannel | null;
}

export interface AdminApp extends Express {
  locals: Express['locals'] & { admin: AdminContext; counters: ServerCounters };
}

const defaultLog: AdminLogger = (message, err) => console.error(`[gatehouse admin] ${message}`, err ?? '');

/** Builds the admin API (Kong's conventions) over an opened database. */
export function createAdminApp(deps: AdminAppDeps): AdminApp {
  const log = deps.log ?? defaultLog;
  const plugins = deps.plugins ?? bundledPlugins;
  const store = new ConfigStore(deps.database, { onCommitted: deps.onCommitted, log });
  const entities = new EntityService(store);
  registerDefaultKinds(entities, plugins, { routerFlavor: deps.routerFlavor });

  const { app, router, resources, counters, node, finish } = adminShell<AdminApp>(deps);
  const ctx: AdminContext = {
    store,
    entities,
    plugins,
    router,
    resources,
    mountEntity: (kind, options) => mountEntityRoutes(ctx, kind, options),
  };
  app.locals.admin = ctx;
  app.locals.counters = counters;

  mountRootRoutes(ctx, node);
  mountNodeRoutes(ctx);
  if (deps.logLevel) mountLogLevelRoutes(ctx, deps.logLevel);
  // fixed paths before the generated `/{entities}/{id_or_key}` ones that would read them as keys
  mountPluginRoutes(ctx);
  mountSchemaRoutes(ctx);
  mountOpenApiRoute(ctx, node.version);
  mountTagRoutes(ctx);
  mountApiRoutes(ctx);
  mountDeclarativeRoutes(ctx);
  mountUpstreamRoutes(ctx, { health: deps.health ?? null });
  for (const kind of entities.allKinds()) mountEntityRoutes(ctx, kind);
  for (const extension of deps.extensions ?? []) extension(ctx);
  // certificates come with the TLS extension
  if (entities.allKinds().some((k) => k.def.name === 'certificates')) mountClientCertificateRoutes(ctx);
  return finish(log);
}
