import { credentialKey, diffSection, type ConfigState, type SectionChanges, type SectionKey } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { Keyring } from '../keys/keyring';
import { loadKeysForSnapshot } from '../keys/snapshot-keys';
import { sql } from 'kysely';
import type { ConfigStore } from '../store/config-store';
import { loadTlsForSnapshot } from '../tls/snapshot-tls';
import { CHANGES_KEPT_VERSIONS, ensureChangeCapture, readChanges, readRows } from './change-capture';
import type { PublisherLogger } from './publication-record';

/** Tables whose rows are snapshot rows as stored, and their section. */
export function rowTables(plugins: readonly PluginDefinition[]): Map<string, SectionKey> {
  const tables = new Map<string, SectionKey>([
    ['services', 'services'],
    ['routes', 'routes'],
    ['consumers', 'consumers'],
    ['plugins', 'plugins'],
    ['upstreams', 'upstreams'],
    ['targets', 'targets'],
  ]);
  for (const entity of plugins.flatMap((p) => p.entities ?? [])) tables.set(entity.name, credentialKey(entity.name));
  return tables;
}

/** Tables whose sections are read whole when they change (private material is decrypted on the way). */
export const KEY_TABLES = ['key_sets', 'keys'];
export const TLS_TABLES = ['certificates', 'snis', 'ca_certificates', 'vaults'];

export interface ReadChangesOptions {
  plugins: readonly PluginDefinition[];
  keyring?: Keyring | null;
  tls?: boolean;
  /** above this many changed rows, null is returned: the full snapshot is cheaper to publish */
  limit: number;
}

export type ChangeRead =
  | { kind: 'changes'; version: number; epoch: string | null; changes: Record<SectionKey, SectionChanges> }
  /** too many changes, or the epoch moved: publish a full snapshot */
  | { kind: 'full' };

/**
 * Installs change capture on every table whose changes `readChangesSince` reads, and has the store bump the version
 * at commit. False (after a warning) when it cannot be installed: every write then publishes a full snapshot.
 */
export async function installChangeCapture(store: ConfigStore, opts: Omit<ReadChangesOptions, 'limit'>, log: PublisherLogger): Promise<boolean> {
  const tables = [...rowTables(opts.plugins).keys(), ...(opts.keyring ? KEY_TABLES : []), ...(opts.keyring && opts.tls ? TLS_TABLES : [])];
  try {
    await ensureChangeCapture(store.db, tables);
    store.bumpOnCommit();
    return true;
  } catch (err) {
    log.warn('change capture unavailable: every write publishes a full snapshot', { error: err instanceof Error ? err.message : String(err) });
    return false;
  }
}

/**
 * What changed since `state.version`, read in one repeatable-read transaction with the version it leads to: the
 * changed rows as they are now, and the ids that are gone. Costs what changed, not the size of the configuration.
 */
export async function readChangesSince(store: ConfigStore, state: ConfigState, opts: ReadChangesOptions): Promise<ChangeRead> {
  const tables = rowTables(opts.plugins);
  const result = await store.db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    const { rows: at } = await sql<{ version: string | number; epoch: string | null }>`
      select s.version, (select epoch from cluster_epoch where id = 1) as epoch from config_state s where s.id = 1`.execute(trx);
    const version = Number(at[0]?.version ?? 0);
    const epoch = at[0]?.epoch ?? null;
    if (epoch !== state.epoch) return { kind: 'full' as const };
    if (version <= state.version) return { kind: 'changes' as const, version, epoch, changes: {} };
    // the change log keeps the last CHANGES_KEPT_VERSIONS versions: a publisher further behind reads everything again
    if (version - state.version > CHANGES_KEPT_VERSIONS / 2) return { kind: 'full' as const };
    const byTable = await readChanges(trx, state.version, version, opts.limit);
    if (!byTable) return { kind: 'full' as const };
    const changes: Record<SectionKey, SectionChanges> = {};
    for (const [table, ids] of byTable) {
      const key = tables.get(table);
      if (!key) continue;
      const rows = await readRows(trx, table, ids);
      const found = new Set(rows.map((r) => r.id));
      changes[key] = { upsert: rows, delete: ids.filter((id) => !found.has(id) && state.get(key, id) !== undefined) };
    }
    if (opts.keyring && KEY_TABLES.some((t) => byTable.has(t))) {
      const sections = await loadKeysForSnapshot(trx, opts.keyring);
      changes.key_sets = diffSection(state.sections.get('key_sets'), sections.key_sets as never);
      changes.keys = diffSection(state.sections.get('keys'), sections.keys as never);
    }
    if (opts.keyring && opts.tls && TLS_TABLES.some((t) => byTable.has(t))) {
      const sections = await loadTlsForSnapshot(trx, opts.keyring);
      for (const [name, rows] of Object.entries(sections)) changes[name] = diffSection(state.sections.get(name), rows as never);
    }
    return { kind: 'changes' as const, version, epoch, changes };
  });
  return result;
}
