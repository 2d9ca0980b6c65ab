import type { EntityDefinition } from '@gatehouse/core';
import { keys, keySets } from '@gatehouse/core';
import { createEntityTable } from '../db/entity-tables';
import type { MigrationSet } from '../db/migrations';

export const KEY_ENTITIES: EntityDefinition[] = [keySets, keys];

/**
 * Tables `key_sets` and `keys` (UNIQUE name each, UNIQUE (kid, set), keys.set_id → key_sets ON DELETE CASCADE).
 * Pass to `openDatabase({ migrations })`.
 */
export function keyMigrations(): MigrationSet {
  const known = new Map(KEY_ENTITIES.map((d) => [d.name, d]));
  return {
    '0100_key_sets_and_keys': {
      async up(db) {
        for (const def of KEY_ENTITIES) await createEntityTable(db, def, known);
      },
    },
  };
}
