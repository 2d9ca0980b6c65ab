import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { compile } from '@gatehouse/data-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import { createDeclarativeAdminApp, type DeclarativeAdminApp } from '../dbless/admin-app';
import { DeclarativeSource } from '../dbless/declarative-source';
import { parseDocumentText } from '../declarative/document';
import { offlineDocumentKinds } from '../declarative/offline-kinds';
import { KONG_COMPATIBLE_VERSION } from '../http/admin-shell';
import { startAdminServer, type AdminServer } from '../http/server';
import { clusteringExtension } from '../routes/clustering';
import { adminErrorLog, adminTlsOf } from './admin-tls';
import type { DeclarativeStartOptions } from './options';
import { redisDocumentStore } from './redis-document-store';

/** A node without a database running in this process: what the CLI reports and stops. */
export interface DeclarativeNode {
  source: DeclarativeSource;
  /** the admin API, when this node serves one (`start`); a lone data plane has none */
  admin: AdminServer | null;
  app: DeclarativeAdminApp | null;
  close(): Promise<void>;
}

/** the file's document, or a clear start-up error naming the file */
function readDocument(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`GATEHOUSE_DECLARATIVE_CONFIG: cannot read ${file}: ${(err as Error).message}`);
  }
  return parseDocumentText(text);
}

/**
 * The configuration source of a node without a database (GATEHOUSE_DATABASE=off): the declarative file, loaded,
 * checked with the data plane's compile and published to the bus before anything listens. With `admin`, the
 * database-less admin API starts once `beforeAdminListens` (the proxy) is up.
 */
export async function startDeclarative(options: DeclarativeStartOptions): Promise<DeclarativeNode> {
  const { bus, log, declarativeConfig } = options;
  // a control plane over Redis keeps its document there, resumes from it and follows the other control planes
  const documents = options.documents ? redisDocumentStore(options.documents.redisUrl, options.documents.redisPrefix) : null;
  const source = new DeclarativeSource({
    kinds: offlineDocumentKinds(bundledPlugins, { routerFlavor: options.routerFlavor }),
    plugins: bundledPlugins,
    bus,
    secret: options.secret,
    check: (snapshot) => void compile(snapshot),
    ...(documents ? { documents } : {}),
    log,
  });
  const closeSource = async () => {
    await source.close();
    documents?.close();
  };
  if (declarativeConfig) {
    try {
      const applied = await source.replace(readDocument(declarativeConfig));
      log.info('declarative configuration loaded', { file: declarativeConfig, version: applied.version, hash: applied.hash });
    } catch (err) {
      const body = err && typeof err === 'object' && 'toBody' in err && typeof err.toBody === 'function' ? JSON.stringify(err.toBody()) : (err as Error).message;
      throw new Error(`GATEHOUSE_DECLARATIVE_CONFIG ${declarativeConfig} does not load: ${body}`);
    }
  } else if (documents && (await source.resume())) {
    log.info('declarative configuration resumed from Redis', source.status());
  } else {
    await source.publishCurrent();
  }
  if (documents) await source.follow();
  await options.beforeAdminListens?.();
  if (!options.admin) return { source, admin: null, app: null, close: closeSource };
  const app = createDeclarativeAdminApp({
    source,
    plugins: bundledPlugins,
    version: KONG_COMPATIBLE_VERSION,
    nodeId: randomUUID(),
    hostname: hostname(),
    role: options.kongRole,
    adminListen: [options.adminListen],
    proxyListen: options.proxyListen,
    statusExtras: () => ({ gatehouse_version: options.version, ...options.statusExtras?.() }),
    ...(options.configuration ? { configuration: options.configuration } : {}),
    configBodyLimit: options.configBodyLimit,
    adminGuiOrigins: options.adminGuiOrigins,
    adminHosts: options.adminHosts,
    extensions: options.kongRole === 'control_plane' ? [clusteringExtension(bus)] : [],
    log: adminErrorLog(log),
  });
  const admin = await startAdminServer(app, options.adminListen, await adminTlsOf(options));
  return {
    source,
    admin,
    app,
    close: async () => {
      await admin.close();
      await closeSource();
    },
  };
}
