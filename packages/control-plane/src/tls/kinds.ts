import { randomUUID } from 'node:crypto';
import {
  caCertificateDigest,
  caCertificates,
  certificates,
  isVaultReference,
  schemaViolation,
  sniNameProblem,
  snis,
  vaults,
} from '@gatehouse/core';
import type { EntityKind } from '../service/entity-kind';
import type { ConfigStore } from '../store/config-store';
import type { Executor, StoredEntity } from '../store/entity-repository';
import type { Keyring } from '../keys/keyring';
import { refuseReferencedCaCertificate, refuseReferencedCertificate } from './certificate-references';

/** Private key fields of a certificate, sealed at rest with the keys' keyring. */
const KEY_FIELDS = ['key', 'key_alt'] as const;

function tryOpen(value: unknown, keyring: Keyring): unknown {
  if (typeof value !== 'string') return value;
  try {
    return keyring.decrypt(value);
  } catch {
    return value;
  }
}

/** Opens sealed key fields (a PATCH merges the stored, sealed values with the request's). */
export function openCertificateKeys(entity: Record<string, unknown>, keyring: Keyring): Record<string, unknown> {
  const out = { ...entity };
  for (const field of KEY_FIELDS) if (out[field] != null) out[field] = tryOpen(out[field], keyring);
  return out;
}

function sealCertificateKeys(entity: Record<string, unknown>, keyring: Keyring): Record<string, unknown> {
  const out = { ...entity };
  // a vault reference is not a secret: it stays readable, and the data plane resolves it
  for (const field of KEY_FIELDS) if (typeof out[field] === 'string' && !isVaultReference(out[field])) out[field] = keyring.encrypt(out[field] as string);
  return out;
}

async function sniNamesOf(ex: Executor, certificateIds: string[]): Promise<Map<string, string[]>> {
  const names = new Map<string, string[]>();
  if (certificateIds.length === 0) return names;
  const rows = await ex.selectFrom(snis.name).select(['certificate_id', 'entity']).where('certificate_id', 'in', certificateIds).execute();
  for (const row of rows) {
    const id = String(row.certificate_id);
    const list = names.get(id) ?? [];
    list.push(String(row.entity.name));
    names.set(id, list);
  }
  for (const list of names.values()) list.sort();
  return names;
}

/** The `snis` shorthand: names checked like SNI rows, no duplicates, none owned by another certificate. */
async function checkShorthand(ex: Executor, names: string[], certificateId: string): Promise<void> {
  const seen = new Set<string>();
  for (const name of names) {
    const problem = sniNameProblem(name);
    if (problem) throw schemaViolation({ snis: problem });
    if (seen.has(name)) throw schemaViolation({ snis: `duplicate SNI in request: ${name}` });
    seen.add(name);
  }
  if (names.length === 0) return;
  const owned = await ex.selectFrom(snis.name).select(['name', 'certificate_id']).where('name', 'in', names).execute();
  for (const row of owned) {
    if (String(row.certificate_id) !== certificateId) {
      throw schemaViolation({ snis: `${String(row.name)} already associated with existing certificate '${String(row.certificate_id)}'` });
    }
  }
}

/**
 * Certificates: PEM pairs checked in clear (core's `checkCertificatePair`), private keys sealed by the keyring and
 * opened again for responses; the `snis` shorthand becomes rows of `snis` in the same transaction, and responses
 * list the certificate's SNI names.
 */
export function certificateKind(keyring: Keyring, store: Pick<ConfigStore, 'repo'>): EntityKind {
  return {
    def: certificates,
    preValidate(input) {
      Object.assign(input, openCertificateKeys(input, keyring));
    },
    async validate(entity, ctx) {
      const names = entity.snis as string[] | null | undefined;
      if (Array.isArray(names)) await checkShorthand(ctx.trx, names, String(entity.id));
    },
    prepare(entity, ctx) {
      const { snis: names, ...rest } = entity;
      ctx.carry = { snis: names };
      return sealCertificateKeys(rest, keyring);
    },
    async afterWrite(entity, ctx) {
      const names = ctx.carry?.snis as string[] | null | undefined;
      if (names === undefined) return;
      const wanted = new Set(names ?? []);
      const rows = await ctx.trx.selectFrom(snis.name).select(['id', 'name']).where('certificate_id', '=', entity.id).execute();
      const have = new Set<string>();
      for (const row of rows) {
        if (wanted.has(String(row.name))) have.add(String(row.name));
        else await store.repo(snis.name).delete(ctx.trx, String(row.id));
      }
      const time = Math.floor(Date.now() / 1000);
      for (const name of wanted) {
        if (have.has(name)) continue;
        const sni: StoredEntity = { id: randomUUID(), created_at: time, name, tags: null, certificate: { id: entity.id } };
        await store.repo(snis.name).insert(ctx.trx, sni);
      }
    },
    beforeDelete: refuseReferencedCertificate,
    present(entity) {
      return openCertificateKeys(entity, keyring);
    },
    async expand(shown, ex) {
      const names = await sniNamesOf(ex, shown.map((c) => String(c.id)));
      for (const c of shown) c.snis = names.get(String(c.id)) ?? [];
    },
  };
}

export const sniKind: EntityKind = { def: snis };

/** CA certificates: `cert_digest` is computed from the certificate on every write (what the client sent is ignored). */
export const caCertificateKind: EntityKind = {
  def: caCertificates,
  prepare(entity) {
    return { ...entity, cert_digest: caCertificateDigest(String(entity.cert)) };
  },
  beforeDelete: refuseReferencedCaCertificate,
};

export const vaultKind: EntityKind = { def: vaults };
