import { z } from 'zod';
import type { FieldErrors } from '../errors';
import { certificateKeyType, certificateProblem, keyMatchesCertificate, keyProblem } from '../tls/pem';
import { isVaultReference } from '../tls/vault-reference';
import { defineEntity } from './definition';
import { baseFields, tags } from './fields';

/** PEM text (64 KiB at most) or a vault reference; the text is checked as a whole in `checkCertificatePair`. */
const pemField = () => z.string().min(1).max(65536, 'length must be at most 65536');

export const certificateSchema = z
  .object({
    ...baseFields,
    cert: pemField(),
    key: pemField(),
    cert_alt: pemField().nullable().default(null),
    key_alt: pemField().nullable().default(null),
    tags: tags(),
    /** shorthand: the SNI names pointing at this certificate (stored as `snis` rows, never in the certificate) */
    snis: z.array(z.string().min(1).max(1024)).max(1000).nullable().optional(),
  })
  .strict();
export type Certificate = z.infer<typeof certificateSchema> & { id: string; created_at: number };

export const CERT_ALT_PAIR = "all or none of these fields must be set: 'cert_alt', 'key_alt'";
export const CERT_KEY_MISMATCH = 'certificate does not match key';
export const CERT_ALT_KEY_MISMATCH = 'alternative certificate does not match key';
export const CERT_ALT_SAME_TYPE =
  'certificate and alternative certificate need to have different type (e.g. RSA and ECDSA), the provided certificates were both of the same type';

/**
 * Kong's checks of a certificate: each PEM parses, each key matches its certificate, the alternative pair is given
 * whole and is of another key type. Fields holding a vault reference are checked on the data plane instead.
 */
export function checkCertificatePair(e: Record<string, unknown>): FieldErrors | null {
  const fields: FieldErrors = {};
  const text = (v: unknown) => (typeof v === 'string' && !isVaultReference(v) ? v : null);
  const cert = text(e.cert);
  const key = text(e.key);
  const certAlt = text(e.cert_alt);
  const keyAlt = text(e.key_alt);
  for (const [field, value, problem] of [
    ['cert', cert, certificateProblem],
    ['key', key, keyProblem],
    ['cert_alt', certAlt, certificateProblem],
    ['key_alt', keyAlt, keyProblem],
  ] as const) {
    const message = value === null ? null : problem(value);
    if (message) fields[field] = message;
  }
  if (Object.keys(fields).length > 0) return fields;
  if ((e.cert_alt == null) !== (e.key_alt == null)) return { '@entity': [CERT_ALT_PAIR] };
  const entity: string[] = [];
  if (cert !== null && key !== null && !keyMatchesCertificate(cert, key)) entity.push(CERT_KEY_MISMATCH);
  if (certAlt !== null && keyAlt !== null && !keyMatchesCertificate(certAlt, keyAlt)) entity.push(CERT_ALT_KEY_MISMATCH);
  if (entity.length === 0 && cert !== null && certAlt !== null && certificateKeyType(cert) === certificateKeyType(certAlt)) entity.push(CERT_ALT_SAME_TYPE);
  return entity.length > 0 ? { '@entity': entity } : null;
}

export const certificates = defineEntity({
  name: 'certificates',
  adminPath: 'certificates',
  schema: certificateSchema,
  uniques: [],
  foreignKeys: [],
  updatedAt: false,
  check: checkCertificatePair,
  privateFields: [{ path: 'key' }, { path: 'key_alt' }],
});
