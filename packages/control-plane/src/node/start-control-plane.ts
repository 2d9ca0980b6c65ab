import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { PublicationCheck } from '@gatehouse/data-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { openDatabase, type Database } from '../db/open-database';
import { createAdminApp, type AdminApp } from '../http/app';
import { startAdminServer, type AdminServer } from '../http/server';
import { startControlPlaneStatusServer, type ControlPlaneStatusServer } from '../http/status-listener';
import { openKeyring } from '../keys/keyring';
import { keysExtension } from '../keys/routes';
import { ControlPlaneMetrics } from '../metrics/control-plane-metrics';
import { metricsExtension } from '../metrics/routes';
import { controlPlaneMigrations } from '../node-migrations';
import { SnapshotPublisher } from '../publisher/snapshot-publisher';
import { createRbac } from '../rbac';
import { clusteringExtension } from '../routes/clustering';
import { tlsExtension } from '../tls/routes';
import { adminErrorLog, adminTlsOf } from './admin-tls';
import type { ControlPlaneStartOptions } from './options';

/** A control plane running in this process: what the CLI reports and stops. */
export interface ControlPlaneNode {
  admin: AdminServer;
  /** the admin API's Express app (its registered routes, for the OpenAPI completeness check) */
  app: AdminApp;
  database: Database;
  publisher: SnapshotPublisher;
  /** the status listener, when this node runs it */
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
export async function startControlPlane(options: ControlPlaneStartOptions): Promise<ControlPlaneNode> {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const { bus, log } = options;
  const keyring = openKeyring({ secret: options.keyringSecret ?? undefined, dataDir: options.dataDir });
  const database = await openDatabase({
    url: options.databaseUrl ?? undefined,
    dataDir: options.databaseUrl ? undefined : join(options.dataDir, 'db'),
    migrations: controlPlaneMigrations(),
  });
  const rbac = createRbac({ db: database.db, mode: options.enforceRbac, adminToken: options.adminToken ?? undefined, log: adminErrorLog(log) });
  await rbac.bootstrap();
  let publisher: SnapshotPublisher | null = null;
  const registry = options.metrics?.registry;
  const cpMetrics = registry ? new ControlPlaneMetrics({ registry, pingDatabase: () => database.ping(), bus, publisher: () => publisher?.status() ?? null }) : null;
  const app = createAdminApp({
    database,
    onCommitted: () => publisher?.trigger(),
    plugins: bundledPlugins,
    routerFlavor: options.routerFlavor,
    nodeId: randomUUID(),
    hostname: hostname(),
    role: options.kongRole,
    adminListen: [options.adminListen],
    proxyListen: options.proxyListen,
    statusExtras: () => ({ gatehouse_version: options.version, publisher: publisher?.status(), ...options.statusExtras?.() }),
    middleware: rbac.middleware,
    adminGuiOrigins: options.adminGuiOrigins,
    configBodyLimit: options.configBodyLimit,
    adminHosts: options.adminHosts,
    health: options.health ?? null,
    logLevel: options.logLevel,
    configuration: options.configuration,
    extensions: [rbac.extension, keysExtension(keyring), tlsExtension(keyring), clusteringExtension(bus), ...(options.metrics ? [metricsExtension(options.metrics.exposed)] : []), ...(options.extensions ?? [])],
    log: adminErrorLog(log),
  });
  publisher = new SnapshotPublisher({
    store: app.locals.admin.store,
    bus,
    secret: options.secret,
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
  await options.beforeAdminListens?.();
  const admin = await startAdminServer(app, options.adminListen, await adminTlsOf(options));
  const status = options.statusListen
    ? await startControlPlaneStatusServer({
        listen: options.statusListen,
        pingDatabase: () => database.ping(),
        configVersion: () => app.locals.admin.store.version(),
        publisher: () => publisher?.status() ?? null,
        metrics: registry,
        extras: () => ({ gatehouse_version: options.version }),
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
