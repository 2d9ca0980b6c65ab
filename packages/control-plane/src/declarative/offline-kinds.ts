import { randomBytes } from 'node:crypto';
import type { PluginDefinition } from '@gatehouse/plugins';
import { keyringFromKey } from '../keys/keyring';
import { keyKind, keySetKind } from '../keys/kinds';
import { registerDefaultKinds } from '../service/default-kinds';
import type { EntityKind } from '../service/entity-kind';
import { orderKinds } from './kinds';

/**
 * The entity kinds a control plane registers, built without a database, for checking a document offline
 * (`gatehouse config validate`). A test keeps this list equal to what the admin API registers.
 */
export function offlineDocumentKinds(plugins: PluginDefinition[]): EntityKind[] {
  const kinds: EntityKind[] = [];
  const registry = { register: (kind: EntityKind) => kinds.push(kind) };
  registerDefaultKinds(registry, plugins);
  registry.register(keySetKind);
  // a throwaway keyring: offline checks read key material in clear and never seal it
  registry.register(keyKind(keyringFromKey(randomBytes(32))));
  return orderKinds(kinds);
}
