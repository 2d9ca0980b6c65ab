import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  clusteringExtension,
  createDeclarativeAdminApp,
  DeclarativeSource,
  KONG_COMPATIBLE_VERSION,
  offlineDocumentKinds,
  parseDocumentText,
  startAdminServer,
  type AdminServer,
  type DeclarativeAdminApp,
} from '@gatehouse/control-plane';
import { compile } from '@gatehouse/data-plane';
import { bundledPlugins } from '@gatehouse/plugins';
import type { ConfigBus } from '@gatehouse/sync';
import { adminTlsOf, listenText } from './admin-listener';
import type { Logger } from './logger';
import { redisDocumentStore } from './redis-document-store';
import type { Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

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
export async function startDeclarativeNode(
  settings: Settings,
  bus: ConfigBus,
  secret: string,
  log: Logger,
  opts: { admin: boolean; statusExtras?: () => Record<string, unknown>; beforeAdminListens?: () => Promise<void>; configuration?: Record<string, unknown> },
): Promise<DeclarativeNode> {
  // a control plane over Redis keeps its document there, resumes from it and follows the other control planes
  const documents = settings.redisUrl && settings.role !== 'data_plane' ? redisDocumentStore(settings.redisUrl, settings.redisPrefix) : null;
  const source = new DeclarativeSource({
    kinds: offlineDocumentKinds(bundledPlugins, { routerFlavor: settings.routerFlavor }),
    plugins: bundledPlugins,
    bus,
    secret,
    check: (snapshot) => void compile(snapshot),
    ...(documents ? { documents } : {}),
    log,
  });
  const closeSource = async () => {
    await source.close();
    documents?.close();
  };
  if (settings.declarativeConfig) {
    try {
      const applied = await source.replace(readDocument(settings.declarativeConfig));
      log.info('declarative configuration loaded', { file: settings.declarativeConfig, version: applied.version, hash: applied.hash });
    } catch (err) {
      const body = err && typeof err === 'object' && 'toBody' in err && typeof err.toBody === 'function' ? JSON.stringify(err.toBody()) : (err as Error).message;
      throw new Error(`GATEHOUSE_DECLARATIVE_CONFIG ${settings.declarativeConfig} does not load: ${body}`);
    }
  } else if (documents && (await source.resume())) {
    log.info('declarative configuration resumed from Redis', source.status());
  } else {
    await source.publishCurrent();
  }
  if (documents) await source.follow();
  await opts.beforeAdminListens?.();
  if (!opts.admin) return { source, admin: null, app: null, close: closeSource };
  const app = createDeclarativeAdminApp({
    source,
    plugins: bundledPlugins,
    version: KONG_COMPATIBLE_VERSION,
    nodeId: randomUUID(),
    hostname: hostname(),
    role: settings.role === 'all' ? 'traditional' : 'control_plane',
    adminListen: [listenText(settings.adminListen)],
    proxyListen: settings.role === 'all' ? [listenText(settings.proxyListen), ...(settings.proxyTlsListen ? [`${listenText(settings.proxyTlsListen)} http2 ssl`] : [])] : [],
    statusExtras: () => ({ gatehouse_version: GATEHOUSE_VERSION, ...opts.statusExtras?.() }),
    ...(opts.configuration ? { configuration: opts.configuration } : {}),
    configBodyLimit: settings.adminMaxConfigBody,
    adminGuiOrigins: settings.adminGuiOrigins,
    adminHosts: settings.adminHosts,
    extensions: settings.role === 'control_plane' ? [clusteringExtension(bus)] : [],
    log: (message, err) => log.error(message, { error: err instanceof Error ? err.message : err === undefined ? undefined : String(err) }),
  });
  const admin = await startAdminServer(app, listenText(settings.adminListen), await adminTlsOf(settings));
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
