import {
  caCertificates,
  certificates,
  snis,
  vaults,
  type SnapshotCaCertificate,
  type SnapshotCertificate,
  type SnapshotConfig,
  type SnapshotSni,
  type SnapshotVault,
} from '@gatehouse/core';
import type { Executor } from '../store/entity-repository';
import type { Keyring } from '../keys/keyring';
import { openCertificateKeys } from './kinds';

type TlsSections = Required<Pick<SnapshotConfig, 'certificates' | 'snis' | 'ca_certificates' | 'vaults'>>;

/**
 * The TLS sections of a snapshot, ordered by id. Certificate keys leave the database in clear only here, for the
 * signed snapshot; vault references stay references (data planes resolve them from their own environment).
 */
export async function loadTlsForSnapshot(db: Executor, keyring: Keyring): Promise<TlsSections> {
  const rows = async (table: string) => (await db.selectFrom(table).select('entity').orderBy('id').execute()).map((r) => r.entity as Record<string, unknown>);
  const [certRows, sniRows, caRows, vaultRows] = await Promise.all([rows(certificates.name), rows(snis.name), rows(caCertificates.name), rows(vaults.name)]);
  return {
    certificates: certRows.map((row): SnapshotCertificate => {
      const c = openCertificateKeys(row, keyring);
      return {
        id: String(c.id),
        cert: String(c.cert),
        key: String(c.key),
        cert_alt: (c.cert_alt as string | null) ?? null,
        key_alt: (c.key_alt as string | null) ?? null,
      };
    }),
    snis: sniRows.map((s): SnapshotSni => ({ id: String(s.id), name: String(s.name), certificate: { id: String((s.certificate as { id: string }).id) } })),
    ca_certificates: caRows.map((c): SnapshotCaCertificate => ({ id: String(c.id), cert: String(c.cert) })),
    vaults: vaultRows.map((v): SnapshotVault => ({
      id: String(v.id),
      prefix: String(v.prefix),
      name: String(v.name),
      config: (v.config as Record<string, unknown> | null) ?? null,
    })),
  };
}
