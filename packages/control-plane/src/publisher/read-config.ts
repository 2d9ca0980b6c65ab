import { credentialKey, emptyConfig, targets, upstreams, type RowOf, type SnapshotConfig } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { Keyring } from '../keys/keyring';
import { loadKeysForSnapshot } from '../keys/snapshot-keys';
import { readEpoch } from '../store/cluster-epoch';
import { loadTlsForSnapshot } from '../tls/snapshot-tls';
import type { ConfigStore } from '../store/config-store';
import type { StoredEntity } from '../store/entity-repository';

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
    const names = ['services', 'routes', 'consumers', 'plugins', ...credentialNames(opts.plugins), upstreams.name, targets.name];
    store.register(upstreams);
    store.register(targets);
    const lists = new Map(await Promise.all(names.map(async (name) => [name, await store.repo(name).all(trx)] as const)));
    const config = assembleSnapshotConfig((name) => lists.get(name) ?? [], opts.plugins);
    if (opts.keyring) Object.assign(config, await loadKeysForSnapshot(trx, opts.keyring));
    if (opts.keyring && opts.tls) Object.assign(config, await loadTlsForSnapshot(trx, opts.keyring));
    return { config, epoch: await readEpoch(trx) };
  });
  return { version, epoch: result.epoch, config: result.config };
}

/** the credential families of the installed plugins, each once */
function credentialNames(plugins: PluginDefinition[]): string[] {
  return [...new Set(plugins.flatMap((p) => p.entities ?? []).map((e) => e.name))];
}

/**
 * The entity sections of a snapshot (services, routes, consumers, plugins, credentials, upstreams, targets) from
 * stored entities, whatever holds them (the database, or a declarative document in memory).
 */
export function assembleSnapshotConfig(read: (name: string) => StoredEntity[], plugins: PluginDefinition[]): SnapshotConfig {
  // stored rows went through their entity's schema, which is what the section's row type says
  const rows = <K extends string>(key: K, name: string = key) => read(name) as Array<RowOf<K>>;
  const config = emptyConfig();
  config.services = rows('services');
  config.routes = rows('routes');
  config.consumers = rows('consumers');
  config.plugins = rows('plugins');
  for (const name of credentialNames(plugins)) config.credentials[name] = rows(credentialKey(name), name);
  config.upstreams = rows('upstreams', upstreams.name);
  config.targets = rows('targets', targets.name);
  return config;
}
