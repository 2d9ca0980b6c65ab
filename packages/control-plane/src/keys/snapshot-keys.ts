import { keys, keySets, type SnapshotConfig, type SnapshotKey } from '@gatehouse/core';
import type { Executor } from '../store/entity-repository';
import type { Keyring } from './keyring';
import { openKeyMaterial } from './seal';

/**
 * The key sets and keys for a snapshot, ordered by id, with private material decrypted: this is the one place where
 * it leaves the database in clear, for the signed snapshot that data planes load.
 */
export async function loadKeysForSnapshot(db: Executor, keyring: Keyring): Promise<Pick<SnapshotConfig, 'key_sets' | 'keys'>> {
  const setRows = await db.selectFrom(keySets.name).select('entity').orderBy('id').execute();
  const keyRows = await db.selectFrom(keys.name).select('entity').orderBy('id').execute();
  const key_sets = setRows.map(({ entity: s }) => ({ id: String(s.id), name: (s.name as string | null) ?? null }));
  const snapshotKeys = keyRows.map(({ entity: k }): SnapshotKey => {
    const opened = openKeyMaterial({ jwk: (k.jwk as string | null) ?? null, pem: (k.pem as SnapshotKey['pem']) ?? null }, keyring);
    return {
      id: String(k.id),
      name: (k.name as string | null) ?? null,
      kid: String(k.kid),
      set: (k.set as { id: string } | null) ?? null,
      jwk: opened.jwk,
      pem: opened.pem ? { public_key: opened.pem.public_key ?? null, private_key: opened.pem.private_key ?? null } : null,
    };
  });
  return { key_sets, keys: snapshotKeys };
}
