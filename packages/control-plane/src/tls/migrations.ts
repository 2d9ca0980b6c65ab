import type { EntityDefinition } from '@gatehouse/core';
import { caCertificates, certificates, snis, vaults } from '@gatehouse/core';
import { BASE_ENTITIES, type MigrationSet } from '../db/migrations';
import { createEntityTable } from '../db/entity-tables';

export const TLS_ENTITIES: EntityDefinition[] = [certificates, snis, caCertificates, vaults];

/**
 * Tables `certificates`, `snis` (UNIQUE name, certificate_id → certificates ON DELETE CASCADE), `ca_certificates`
 * (UNIQUE cert_digest) and `vaults` (UNIQUE prefix). Pass to `openDatabase({ migrations })`.
 */
export function tlsMigrations(): MigrationSet {
  const known = new Map([...BASE_ENTITIES, ...TLS_ENTITIES].map((d) => [d.name, d]));
  return {
    '0110_tls_entities': {
      async up(db) {
        for (const def of TLS_ENTITIES) await createEntityTable(db, def, known);
      },
    },
  };
}
