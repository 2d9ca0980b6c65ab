import type { MigrationSet } from './db/migrations';
import { keyMigrations } from './keys/migrations';
import { rbacMigrations } from './rbac/migrations';
import { tlsMigrations } from './tls/migrations';

/**
 * Every hand-written migration a control plane runs (keys, RBAC, TLS) besides the generated ones: whoever opens a
 * control plane's database must name the same set, or the migrator finds executed migrations it does not know.
 */
export function controlPlaneMigrations(): MigrationSet {
  return { ...keyMigrations(), ...rbacMigrations(), ...tlsMigrations() };
}
