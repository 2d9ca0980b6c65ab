import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler, type Router } from 'express';
import { newCounters, type NodeInfo, type ServerCounters } from '../routes/root';
import { isConfigUpload } from '../declarative/routes';
import { ADMIN_BODY_LIMIT, ADMIN_CONFIG_BODY_LIMIT, bodyReader } from './body';
import { browserGuard, loopbackOnly } from './browser-guard';
import { cors } from './cors';
import { errorResponder, notFound, type AdminLogger } from './errors';
import { adminLatency } from './latency';
import { ResourceRegistry } from './resources';

/** The version Kong tools see: decK and Kong Manager gate features on Kong's version. */
export const KONG_COMPATIBLE_VERSION = '3.9.0';

/** What every admin API is given about its node and its requests, with or without a database. */
export interface AdminShellOptions {
  /** reported by GET /; default KONG_COMPATIBLE_VERSION */
  version?: string;
  nodeId?: string;
  hostname?: string;
  /** Kong's role names: traditional | control_plane | data_plane */
  role?: string;
  adminListen?: string[];
  proxyListen?: string[];
  /** merged into GET /status (e.g. configuration_hash of the local data plane) */
  statusExtras?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Kong's `configuration` keys GET / reports beyond the built-in ones (database, pg_*, listeners, …) */
  configuration?: Record<string, unknown>;
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
}

export interface AdminShell<App extends Express> {
  app: App;
  router: Router;
  resources: ResourceRegistry;
  counters: ServerCounters;
  node: NodeInfo;
  /** closes the route registry and answers what no route took (404) and every error in Kong's shape */
  finish(log: AdminLogger): App;
}

/**
 * The request path every admin API shares: latency header, request counter, browser guard, CORS, body reader, the
 * caller's middleware, then the routes (case-sensitive like Kong's router: RBAC endpoint rules compare paths as
 * written, `/RBAC/users` is not `/rbac/users`); and the node's information for GET / and GET /status.
 */
export function adminShell<App extends Express>(options: AdminShellOptions): AdminShell<App> {
  // the app's own `locals` members are set by the caller before it serves
  const app = express() as App;
  app.disable('x-powered-by');
  app.set('etag', false);
  const router = express.Router({ caseSensitive: true });
  const resources = new ResourceRegistry(router);
  const counters = newCounters();
  const adminListen = options.adminListen ?? ['127.0.0.1:8001'];
  app.use(adminLatency());
  app.use((_req, _res, next) => {
    counters.total_requests++;
    next();
  });
  app.use(browserGuard({ allowedOrigins: options.adminGuiOrigins ?? [], adminHosts: options.adminHosts, loopbackListener: loopbackOnly(adminListen) }));
  app.use(cors(resources, options.adminGuiOrigins ?? []));
  app.use(bodyReader({ body: options.bodyLimit ?? ADMIN_BODY_LIMIT, largeBody: options.configBodyLimit ?? ADMIN_CONFIG_BODY_LIMIT }, isConfigUpload));
  for (const middleware of options.middleware ?? []) app.use(middleware);
  app.use(router);

  const node: NodeInfo = {
    version: options.version ?? KONG_COMPATIBLE_VERSION,
    nodeId: options.nodeId ?? randomUUID(),
    hostname: options.hostname,
    role: options.role ?? 'traditional',
    adminListen,
    proxyListen: options.proxyListen ?? ['0.0.0.0:8000'],
    counters,
    statusExtras: options.statusExtras,
    configuration: options.configuration,
  };
  const finish = (log: AdminLogger): App => {
    resources.finish();
    app.use(notFound());
    app.use(errorResponder(log));
    return app;
  };
  return { app, router, resources, counters, node, finish };
}
