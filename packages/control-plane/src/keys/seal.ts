import type { Keyring } from './keyring';
import { jwkHasPrivatePart } from './validate-key';

type Pem = { private_key: string | null; public_key: string | null } | null;

/** The secret-bearing fields of a key, as stored or as given. */
export interface KeyMaterial {
  jwk: string | null;
  pem: Pem;
}

function jwkIsPrivate(jwk: string): boolean {
  try {
    const parsed = JSON.parse(jwk);
    return parsed !== null && typeof parsed === 'object' && jwkHasPrivatePart(parsed);
  } catch {
    // Unparsable material never passes validation; encrypting it anyway keeps the rule "secret unless proven public".
    return true;
  }
}

/** Encrypts the private parts before storage: a JWK holding private members as a whole, and `pem.private_key`. */
export function sealKeyMaterial<T extends KeyMaterial>(key: T, keyring: Keyring): T {
  const jwk = key.jwk != null && jwkIsPrivate(key.jwk) ? keyring.encrypt(key.jwk) : key.jwk;
  const pem = key.pem ? { ...key.pem, private_key: key.pem.private_key != null ? keyring.encrypt(key.pem.private_key) : null } : key.pem;
  return { ...key, jwk, pem };
}

/** Reverses `sealKeyMaterial` for admin responses and snapshots; values stored unencrypted pass through. */
export function openKeyMaterial<T extends KeyMaterial>(key: T, keyring: Keyring): T {
  const jwk = key.jwk != null ? keyring.decrypt(key.jwk) : key.jwk;
  const pem = key.pem ? { ...key.pem, private_key: key.pem.private_key != null ? keyring.decrypt(key.pem.private_key) : null } : key.pem;
  return { ...key, jwk, pem };
}
