import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import {
  clusteringExtension,
  ControlPlaneMetrics,
  createAdminApp,
  metricsExtension,
  startControlPlaneStatusServer,
  type ControlPlaneStatusServer,
  createRbac,
  controlPlaneMigrations,
  keysExtension,
  openDatabase,
  openKeyring,
  SnapshotPublisher,
  startAdminServer,
  tlsExtension,
  type AdminApp,
  type AdminContext,
  type LogLevelControl,
  type AdminServer,
  type Database,
} from '@gatehouse/control-plane';
import { PublicationCheck } from '@gatehouse/data-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import type { ConfigBus, HealthChannel } from '@gatehouse/sync';
import { adminTlsOf, listenText } from './admin-listener';
import type { Logger } from './logger';
import type { NodeMetrics } from './node-metrics';
import type { Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

export interface ControlPlaneNode {
  admin: AdminServer;
  /** the admin API's Express app (its registered routes, for the OpenAPI completeness check) */
  app: AdminApp;
  database: Database;
  publisher: SnapshotPublisher;
  /** the status listener (GATEHOUSE_STATUS_LISTEN) when this node runs it */
  status: ControlPlaneStatusServer | null;
  close(): Promise<void>;
}


/**
 * How far the heap may grow past what the last full collection kept, in percent. A declarative apply allocates fast
 * (a 64 MiB document, 100,000 consumers) and V8 then lets the heap reach up to four times the live set before it
 * collects: 900 MiB resident for some 200 MiB live. Bounded (10 %, the least V8 itself ever uses), the control plane
 * collects sooner and stays within the memory decision 26 gives it, for more time spent collecting during such an apply.
 */
const HEAP_GROWING_PERCENT = 10;

/**
 * The admin API over the database, publishing a snapshot after every committed write; the data plane's compile and
 * applyDelta decide what is published (see PublicationCheck for what it keeps).
 */
export async function startControlPlaneNode(
  settings: Settings,
  bus: ConfigBus,
  secret: string,
  log: Logger,
  opts: {
    statusExtras?: () => Record<string, unknown>;
    extensions?: Array<(ctx: AdminContext) => void>;
    /** the node's metrics registry, served at the admin API's `/metrics` */
    metrics?: NodeMetrics;
    /** run the control plane's own status listener on GATEHOUSE_STATUS_LISTEN (`start` gives it to the data plane) */
    statusListener?: boolean;
    health?: HealthChannel | null;
    /** the node's log level and the channel that carries changes (Kong's /debug/…/log-level) */
    logLevel?: LogLevelControl;
    /** Kong `configuration` keys for GET / */
    configuration?: Record<string, unknown>;
    /** runs once snapshots are published and before the admin API opens (`start`: the proxy listens first) */
    beforeAdminListens?: () => Promise<void>;
  } = {},
): Promise<ControlPlaneNode> {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const keyring = openKeyring({ secret: settings.keyringSecret ?? undefined, dataDir: settings.dataDir });
  const database = await openDatabase({
    url: settings.databaseUrl ?? undefined,
    dataDir: settings.databaseUrl ? undefined : join(settings.dataDir, 'db'),
    migrations: controlPlaneMigrations(),
  });
  const rbac = createRbac({
    db: database.db,
    mode: settings.enforceRbac,
    adminToken: settings.adminToken ?? undefined,
    log: (message: string, err?: unknown) => log.error(message, { error: err instanceof Error ? err.message : err === undefined ? undefined : String(err) }),
  });
  await rbac.bootstrap();
  let publisher: SnapshotPublisher | null = null;
  const registry = opts.metrics?.registry;
  const cpMetrics = registry ? new ControlPlaneMetrics({ registry, pingDatabase: () => database.ping(), bus, publisher: () => publisher?.status() ?? null }) : null;
  const app = createAdminApp({
    database,
    onCommitted: () => publisher?.trigger(),
    plugins: bundledPlugins,
    routerFlavor: settings.routerFlavor,
    nodeId: randomUUID(),
    hostname: hostname(),
    role: settings.role === 'all' ? 'traditional' : 'control_plane',
    adminListen: [listenText(settings.adminListen)],
    proxyListen: settings.role === 'all' ? [listenText(settings.proxyListen), ...(settings.proxyTlsListen ? [`${listenText(settings.proxyTlsListen)} http2 ssl`] : [])] : [],
    statusExtras: () => ({ gatehouse_version: GATEHOUSE_VERSION, publisher: publisher?.status(), ...opts.statusExtras?.() }),
    middleware: rbac.middleware,
    adminGuiOrigins: settings.adminGuiOrigins,
    configBodyLimit: settings.adminMaxConfigBody,
    adminHosts: settings.adminHosts,
    health: opts.health ?? null,
    logLevel: opts.logLevel,
    configuration: opts.configuration,
    extensions: [rbac.extension, keysExtension(keyring), tlsExtension(keyring), clusteringExtension(bus), ...(opts.metrics ? [metricsExtension(opts.metrics.exposed)] : []), ...(opts.extensions ?? [])],
    log: (message, err) => log.error(message, { error: err instanceof Error ? err.message : err === undefined ? undefined : String(err) }),
  });
  publisher = new SnapshotPublisher({
    store: app.locals.admin.store,
    bus,
    secret,
    plugins: bundledPlugins,
    keyring,
    tls: true,
    check: (snapshot) => new PublicationCheck().check(snapshot),
    loader: new PublicationCheck(),
    log,
    onPublished: (_snapshot, ms) => cpMetrics?.published(ms),
    onFailed: () => cpMetrics?.publicationFailed(),
  });
  await publisher.start();
  await opts.beforeAdminListens?.();
  const admin = await startAdminServer(app, listenText(settings.adminListen), await adminTlsOf(settings));
  const status =
    opts.statusListener && settings.statusListen
      ? await startControlPlaneStatusServer({
          listen: listenText(settings.statusListen),
          pingDatabase: () => database.ping(),
          configVersion: () => app.locals.admin.store.version(),
          publisher: () => publisher?.status() ?? null,
          metrics: registry,
          extras: () => ({ gatehouse_version: GATEHOUSE_VERSION }),
        })
      : null;
  return {
    admin,
    app,
    database,
    publisher,
    status,
    close: async () => {
      await status?.close();
      await admin.close();
      await publisher!.stop();
      await database.close();
    },
  };
}
