import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import type { PluginDefinition } from '@gatehouse/plugins';
import { ADMIN_BODY_LIMIT, ADMIN_CONFIG_BODY_LIMIT, bodyReader } from '../http/body';
import { browserGuard, loopbackOnly } from '../http/browser-guard';
import { cors } from '../http/cors';
import { errorResponder, notFound, type AdminLogger } from '../http/errors';
import { adminLatency } from '../http/latency';
import { ResourceRegistry } from '../http/resources';
import { isConfigUpload } from '../declarative/routes';
import { newCounters, type NodeInfo, type ServerCounters } from '../routes/root';
import { mountDeclarativeConfigRoutes } from './config-routes';
import type { DeclarativeSource } from './declarative-source';
import { mountDeclarativeNodeRoutes, mountDeclarativeSchemaRoutes } from './node-routes';
import { mountReadRoutes } from './read-routes';
import { mountDeclarativeTagRoutes } from './tag-routes';

export interface DeclarativeAdminDeps {
  source: DeclarativeSource;
  plugins: PluginDefinition[];
  version: string;
  nodeId?: string;
  hostname?: string;
  role?: string;
  adminListen?: string[];
  proxyListen?: string[];
  statusExtras?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Kong `configuration` keys of GET / beyond the built-in ones (listeners, router flavour, …) */
  configuration?: Record<string, unknown>;
  configBodyLimit?: number;
  adminGuiOrigins?: string[];
  adminHosts?: string[];
  log: AdminLogger;
  /** modules that add routes needing no database (the clustering view of a control plane) */
  extensions?: Array<(ctx: { resources: ResourceRegistry }) => void>;
}

export interface DeclarativeAdminApp extends Express {
  locals: Express['locals'] & { counters: ServerCounters; resources: ResourceRegistry };
}

/**
 * The admin API of a node without a database (Kong's `database = off`): the same request guard, body reader and
 * error shapes as the database-backed one; reads come from the configuration in memory, `POST /config` replaces it
 * whole, and every other write answers 405 with Kong's message.
 */
export function createDeclarativeAdminApp(deps: DeclarativeAdminDeps): DeclarativeAdminApp {
  const app = express() as DeclarativeAdminApp;
  app.disable('x-powered-by');
  app.set('etag', false);
  const router = express.Router({ caseSensitive: true });
  const resources = new ResourceRegistry(router);
  const counters = newCounters();
  app.locals.counters = counters;
  app.locals.resources = resources;
  const adminListen = deps.adminListen ?? ['127.0.0.1:8001'];
  app.use(adminLatency());
  app.use((_req, _res, next) => {
    counters.total_requests++;
    next();
  });
  app.use(browserGuard({ allowedOrigins: deps.adminGuiOrigins ?? [], adminHosts: deps.adminHosts, loopbackListener: loopbackOnly(adminListen) }));
  app.use(cors(resources, deps.adminGuiOrigins ?? []));
  app.use(bodyReader({ body: ADMIN_BODY_LIMIT, largeBody: deps.configBodyLimit ?? ADMIN_CONFIG_BODY_LIMIT }, isConfigUpload));
  app.use(router);

  const node: NodeInfo = {
    version: deps.version,
    nodeId: deps.nodeId ?? randomUUID(),
    hostname: deps.hostname,
    role: deps.role ?? 'traditional',
    adminListen,
    proxyListen: deps.proxyListen ?? ['0.0.0.0:8000'],
    counters,
    statusExtras: deps.statusExtras,
    ...(deps.configuration ? { configuration: deps.configuration } : {}),
  };
  const kinds = deps.source.state.kinds;
  mountDeclarativeNodeRoutes(resources, node, deps.plugins, deps.source);
  mountDeclarativeSchemaRoutes(resources, kinds, deps.plugins);
  mountDeclarativeConfigRoutes(resources, deps.source);
  for (const extension of deps.extensions ?? []) extension({ resources });
  mountDeclarativeTagRoutes(resources, () => deps.source.state);
  mountReadRoutes(resources, kinds, () => deps.source.state);
  resources.finish();
  app.use(notFound());
  app.use(errorResponder(deps.log));
  return app;
}
