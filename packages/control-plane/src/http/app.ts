import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import { bundledPlugins, type PluginDefinition } from '@gatehouse/plugins';
import type { RouterFlavor } from '@gatehouse/core';
import type { Database } from '../db/open-database';
import { isConfigUpload, mountDeclarativeRoutes } from '../declarative/routes';
import { mountApiRoutes } from '../routes/apis';
import { mountEntityRoutes } from '../routes/entity-routes';
import { mountOpenApiRoute } from '../routes/openapi';
import { mountPluginRoutes } from '../routes/plugins';
import { mountRootRoutes, newCounters, type NodeInfo, type ServerCounters } from '../routes/root';
import { mountSchemaRoutes } from '../routes/schemas';
import { mountTagRoutes } from '../routes/tags';
import { EntityService } from '../service/entity-service';
import { registerDefaultKinds } from '../service/default-kinds';
import { ConfigStore } from '../store/config-store';
import { ADMIN_BODY_LIMIT, ADMIN_CONFIG_BODY_LIMIT, bodyReader } from './body';
import { browserGuard, loopbackOnly } from './browser-guard';
import type { AdminContext } from './context';
import { cors } from './cors';
import { errorResponder, notFound, type AdminLogger } from './errors';
import { adminLatency } from './latency';
import { ResourceRegistry } from './resources';
import type { HealthChannel } from '@gatehouse/sync';
import { mountUpstreamRoutes } from '../upstreams/routes';
import { mountLogLevelRoutes, type LogLevelControl } from '../operations/log-level-routes';
import { mountNodeRoutes } from '../operations/node-routes';
import { mountClientCertificateRoutes } from '../routes/client-certificate';

export interface AdminAppDeps {
  /** an opened (migrated) database */
  database: Database;
  /** called after each committed admin write with the new config version */
  onCommitted?: (version: number | null) => void | Promise<void>;
  /** plugins installed on this node; default: every bundled plugin */
  plugins?: PluginDefinition[];
  /** reported by GET / */
  version?: string;
  /** Kong's `router_flavor`; default `traditional_compatible` */
  routerFlavor?: RouterFlavor;
  nodeId?: string;
  hostname?: string;
  /** Kong's role names: traditional | control_plane | data_plane */
  role?: string;
  adminListen?: string[];
  proxyListen?: string[];
  /** merged into GET /status (e.g. configuration_hash of the local data plane) */
  statusExtras?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** largest accepted request body, in bytes; default 4 MiB (decision 16) */
  bodyLimit?: number;
  /** largest accepted `POST /config` body, in bytes (GATEHOUSE_ADMIN_MAX_CONFIG_BODY); default 64 MiB (decision 26) */
  configBodyLimit?: number;
  /** origins whose browser pages may call the admin API (GATEHOUSE_ADMIN_GUI_ORIGINS); default none */
  adminGuiOrigins?: string[];
  /** `Host` names accepted besides loopback ones when the admin API listens on loopback (GATEHOUSE_ADMIN_HOSTS) */
  adminHosts?: string[];
  /** run after body parsing and before any route (admin authentication, RBAC) */
  middleware?: RequestHandler[];
  /** modules that add entities or routes (keys, RBAC, …); they run after the core routes are mounted */
  extensions?: Array<(ctx: AdminContext) => void>;
  log?: AdminLogger;
  /** the node's log level and the bus that carries changes to other nodes (Kong's /debug/…/log-level paths) */
  logLevel?: LogLevelControl;
  /** Kong's `configuration` keys GET / reports beyond the built-in ones (database, pg_*, listeners, …) */
  configuration?: Record<string, unknown>;
  /** target health reported by data planes, and manual health changes sent to them (upstreams' /health) */
  health?: HealthChannel | null;
}

/** The version Kong tools see: decK and Kong Manager gate features on Kong's version. */
export const KONG_COMPATIBLE_VERSION = '3.9.0';

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

  const app = express() as unknown as AdminApp;
  app.disable('x-powered-by');
  app.set('etag', false);
  // case-sensitive like Kong's router: RBAC endpoint rules compare paths as written (`/RBAC/users` is not `/rbac/users`)
  const router = express.Router({ caseSensitive: true });
  const resources = new ResourceRegistry(router);
  const counters = newCounters();
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

  app.use(adminLatency());
  app.use((_req, _res, next) => {
    counters.total_requests++;
    next();
  });
  const adminListen = deps.adminListen ?? ['127.0.0.1:8001'];
  app.use(browserGuard({ allowedOrigins: deps.adminGuiOrigins ?? [], adminHosts: deps.adminHosts, loopbackListener: loopbackOnly(adminListen) }));
  app.use(cors(resources, deps.adminGuiOrigins ?? []));
  app.use(bodyReader({ body: deps.bodyLimit ?? ADMIN_BODY_LIMIT, largeBody: deps.configBodyLimit ?? ADMIN_CONFIG_BODY_LIMIT }, isConfigUpload));
  for (const middleware of deps.middleware ?? []) app.use(middleware);
  app.use(router);

  const node: NodeInfo = {
    version: deps.version ?? KONG_COMPATIBLE_VERSION,
    nodeId: deps.nodeId ?? randomUUID(),
    hostname: deps.hostname,
    role: deps.role ?? 'traditional',
    adminListen,
    proxyListen: deps.proxyListen ?? ['0.0.0.0:8000'],
    counters,
    statusExtras: deps.statusExtras,
    configuration: deps.configuration,
  };
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
  resources.finish();

  app.use(notFound());
  app.use(errorResponder(log));
  return app;
}
