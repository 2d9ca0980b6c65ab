import { sql } from 'kysely';
import { caCertificates, certificates, DbError, ErrorCode, Errors } from '@gatehouse/core';
import type { EntityKind, WriteContext } from '../service/entity-kind';
import type { Executor, StoredEntity } from '../store/entity-repository';

/**
 * References to certificates that live inside other entities (no column of their own), enforced as Kong does:
 *  - `services.client_certificate` and `upstreams.client_certificate` are foreign keys: a write must name an existing
 *    certificate, and a certificate they name cannot be deleted (400, code 4, `@referenced_by`);
 *  - `services.ca_certificates` lists CA certificates: one still listed cannot be deleted (400, code 19).
 * A write that names a client certificate holds a key-share lock on its row and a delete locks the row before looking
 * for references, so a delete and a concurrent write naming that certificate cannot both succeed. (As in Kong, a
 * service's `ca_certificates` are not checked on write.)
 */

/** the entities whose `client_certificate` is a foreign key to certificates, in the order Kong checks them */
const CLIENT_CERTIFICATE_HOLDERS = ['services', 'upstreams'] as const;

async function certificateExists(trx: Executor, id: string): Promise<boolean> {
  const row = await trx.selectFrom(certificates.name).select('id').where('id', '=', id).forKeyShare().executeTakeFirst();
  return row !== undefined;
}

/** kinds already checked (a kind object may be shared by several admin apps of one process) */
const checked = new WeakSet<EntityKind>();

/** `client_certificate` must name an existing certificate (Kong's foreign key), checked after the kind's own checks */
export function checkClientCertificate(kind: EntityKind): void {
  if (checked.has(kind)) return;
  checked.add(kind);
  const previous = kind.validate?.bind(kind);
  kind.validate = async (entity, write) => {
    await previous?.(entity, write);
    const ref = entity.client_certificate as { id?: string } | null | undefined;
    if (ref?.id && !(await certificateExists(write.trx, ref.id))) throw Errors.foreignKey('client_certificate', ref.id, certificates.name);
  };
}

async function lockForDelete(trx: Executor, table: string, id: string): Promise<void> {
  await trx.selectFrom(table).select('id').where('id', '=', id).forUpdate().execute();
}

/** refuses to delete a certificate a service or an upstream presents as its client certificate */
export async function refuseReferencedCertificate(certificate: StoredEntity, { trx }: WriteContext): Promise<void> {
  await lockForDelete(trx, certificates.name, certificate.id);
  for (const holder of CLIENT_CERTIFICATE_HOLDERS) {
    const row = await trx
      .selectFrom(holder)
      .select('id')
      .where(sql<boolean>`entity -> 'client_certificate' ->> 'id' = ${certificate.id}`)
      .limit(1)
      .executeTakeFirst();
    if (row !== undefined) throw Errors.referencedBy(holder, certificates.name);
  }
}

/** refuses to delete a CA certificate a service still lists in its `ca_certificates` */
export async function refuseReferencedCaCertificate(caCertificate: StoredEntity, { trx }: WriteContext): Promise<void> {
  await lockForDelete(trx, caCertificates.name, caCertificate.id);
  const row = await trx
    .selectFrom('services')
    .select('id')
    .where(sql<boolean>`entity -> 'ca_certificates' @> ${JSON.stringify([caCertificate.id])}::jsonb`)
    .limit(1)
    .executeTakeFirst();
  if (row !== undefined) {
    throw new DbError(ErrorCode.REFERENCED_BY_OTHERS, `ca certificate ${caCertificate.id} is still referenced by services (id = ${String(row.id)})`);
  }
}
