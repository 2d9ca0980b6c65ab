import { keys, keySets } from '@gatehouse/core';
import type { EntityKind } from '../service/entity-kind';
import type { Keyring } from './keyring';
import { openKeyMaterial, sealKeyMaterial, type KeyMaterial } from './seal';
import { validateKey } from './validate-key';

export const keySetKind: EntityKind = { def: keySets };

function materialOf(entity: Record<string, unknown>): KeyMaterial {
  return { jwk: (entity.jwk as string | null | undefined) ?? null, pem: (entity.pem as KeyMaterial['pem'] | undefined) ?? null };
}

/**
 * Opens what a write brings: a PATCH merges the stored (sealed) fields with the request's. A value that only looks
 * sealed (a client sending `enc:v1:…`) stays as given and fails validation like any other garbage.
 */
function openTolerant(entity: Record<string, unknown>, keyring: Keyring): Record<string, unknown> {
  const tryOpen = (value: string | null): string | null => {
    if (value == null) return value;
    try {
      return keyring.decrypt(value);
    } catch {
      return value;
    }
  };
  const { jwk, pem } = materialOf(entity);
  return { ...entity, jwk: tryOpen(jwk), pem: pem ? { ...pem, private_key: tryOpen(pem.private_key ?? null) } : pem };
}

/**
 * Keys: the material is checked in clear (Kong's rules, see validate-key), stored with its private parts sealed by
 * the keyring, and served opened again, so clients read back what they wrote.
 */
export function keyKind(keyring: Keyring): EntityKind {
  return {
    def: keys,
    validate(entity) {
      validateKey(openTolerant(entity, keyring));
    },
    prepare(entity) {
      const opened = openTolerant(entity, keyring);
      return { ...opened, ...sealKeyMaterial(materialOf(opened), keyring) };
    },
    present(entity) {
      return { ...entity, ...openKeyMaterial(materialOf(entity), keyring) };
    },
  };
}
