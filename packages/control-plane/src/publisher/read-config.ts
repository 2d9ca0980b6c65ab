import { emptyConfig, targets, upstreams, type SnapshotConfig } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { Keyring } from '../keys/keyring';
import { loadKeysForSnapshot } from '../keys/snapshot-keys';
import { readEpoch } from '../store/cluster-epoch';
import { loadTlsForSnapshot } from '../tls/snapshot-tls';
import type { ConfigStore } from '../store/config-store';

export interface ReadConfigOptions {
  plugins: PluginDefinition[];
  /** when set, key sets and keys (decrypted) are part of the snapshot */
  keyring?: Keyring | null;
  /** when set (with a keyring), certificates (decrypted), SNIs, CA certificates and vaults are part of it */
  tls?: boolean;
}

/**
 * Reads everything a data plane needs, and the config version it corresponds to, in one repeatable-read
 * transaction: the snapshot is a consistent cut even while other admin writes commit.
 */
export async function readSnapshotConfig(
  store: ConfigStore,
  opts: ReadConfigOptions,
): Promise<{ version: number; epoch: string | null; config: SnapshotConfig }> {
  const { version, result } = await store.readConsistent(async (trx) => {
    const config = emptyConfig();
    const [services, routes, consumers, plugins] = await Promise.all(
      ['services', 'routes', 'consumers', 'plugins'].map((name) => store.repo(name).all(trx)),
    );
    config.services = services as unknown as SnapshotConfig['services'];
    config.routes = routes as unknown as SnapshotConfig['routes'];
    config.consumers = consumers as unknown as SnapshotConfig['consumers'];
    config.plugins = plugins as unknown as SnapshotConfig['plugins'];
    for (const entity of opts.plugins.flatMap((p) => p.entities ?? [])) {
      if (entity.name in config.credentials) continue;
      config.credentials[entity.name] = (await store.repo(entity.name).all(trx)) as unknown as SnapshotConfig['credentials'][string];
    }
    if (opts.keyring) Object.assign(config, await loadKeysForSnapshot(trx, opts.keyring));
    config.upstreams = (await store.register(upstreams).all(trx)) as unknown as SnapshotConfig['upstreams'];
    config.targets = (await store.register(targets).all(trx)) as unknown as SnapshotConfig['targets'];
    if (opts.keyring && opts.tls) Object.assign(config, await loadTlsForSnapshot(trx, opts.keyring));
    return { config, epoch: await readEpoch(trx) };
  });
  return { version, epoch: result.epoch, config: result.config };
}
