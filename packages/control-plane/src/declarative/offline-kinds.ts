import { randomBytes } from 'node:crypto';
import type { PluginDefinition } from '@gatehouse/plugins';
import { keyringFromKey } from '../keys/keyring';
import { keyKind, keySetKind } from '../keys/kinds';
import { registerDefaultKinds, type KindOptions } from '../service/default-kinds';
import type { EntityKind } from '../service/entity-kind';
import { caCertificateKind, certificateKind, sniKind, vaultKind } from '../tls/kinds';
import { orderKinds } from './kinds';

/**
 * The entity kinds a control plane registers, built without a database, for checking a document offline
 * (`gatehouse config validate`). A test keeps this list equal to what the admin API registers.
 */
export function offlineDocumentKinds(plugins: PluginDefinition[], options: KindOptions = {}): EntityKind[] {
  const kinds: EntityKind[] = [];
  const registry = { register: (kind: EntityKind) => kinds.push(kind) };
  registerDefaultKinds(registry, plugins, options);
  registry.register(keySetKind);
  // a throwaway keyring: offline checks read key material in clear and never seal it
  const keyring = keyringFromKey(randomBytes(32));
  registry.register(keyKind(keyring));
  // write hooks are never run offline: the certificate kind's store is one that says so if asked
  const noDatabase = {
    repo(): never {
      throw new Error('offline document checks have no database');
    },
  };
  for (const kind of [certificateKind(keyring, noDatabase), sniKind, caCertificateKind, vaultKind]) registry.register(kind);
  return orderKinds(kinds);
}
