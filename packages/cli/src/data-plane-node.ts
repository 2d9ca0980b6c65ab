import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { compile, ConfigHolder, createDataPlaneServer, createStatusServer, type DataPlaneServer, type StatusServer } from '@gatehouse/data-plane';
import type { PluginRuntime } from '@gatehouse/plugins';
import { DataPlaneSync, type ConfigBus } from '@gatehouse/sync';
import type { Logger } from './logger';
import type { Settings } from './settings';
import { GATEHOUSE_VERSION } from './version';

export interface DataPlaneNode {
  id: string;
  holder: ConfigHolder;
  proxy: DataPlaneServer;
  status: StatusServer | null;
  sync: DataPlaneSync;
  close(): Promise<void>;
}

/** A data plane: serves the last good snapshot (disk cache first), follows the bus, never touches the database. */
export async function startDataPlaneNode(
  settings: Settings,
  bus: ConfigBus,
  secret: string,
  log: Logger,
  runtime: PluginRuntime = {},
): Promise<DataPlaneNode> {
  const id = settings.dataPlaneId ?? randomUUID();
  const holder = new ConfigHolder();
  const sync = new DataPlaneSync({
    bus,
    secret,
    cacheFile: join(settings.dataDir, 'data-plane-snapshot.json'),
    apply: (snapshot) => void holder.swap(compile(snapshot)),
    currentVersion: () => (holder.loaded ? holder.current.version : null),
    currentHash: () => (holder.loaded ? holder.current.hash : null),
    identity: { id, version: GATEHOUSE_VERSION },
    logger: log,
    onApplied: (snapshot, source) => log.info('configuration applied', { version: snapshot.version, hash: snapshot.hash, source }),
  });
  const proxy = await createDataPlaneServer({ holder, listen: settings.proxyListen, runtime, log: { error: log.error, warn: log.warn } });
  const status = settings.statusListen
    ? await createStatusServer({ holder, listen: settings.statusListen, proxy, details: () => ({ node_id: id, sync: sync.status() }) })
    : null;
  await sync.start();
  return {
    id,
    holder,
    proxy,
    status,
    sync,
    close: async () => {
      await sync.stop();
      await status?.close();
      await proxy.close(2000);
    },
  };
}
