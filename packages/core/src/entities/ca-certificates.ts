import { z } from 'zod';
import type { FieldErrors } from '../errors';
import { certificateProblem, countCertificates, parseCertificate } from '../tls/pem';
import { defineEntity } from './definition';
import { baseFields, tags } from './fields';

export const caCertificateSchema = z
  .object({
    ...baseFields,
    cert: z.string().min(1).max(65536, 'length must be at most 65536'),
    /** hex SHA-256 of the certificate's DER, computed on every write */
    cert_digest: z.string().nullable().optional(),
    tags: tags(),
  })
  .strict();
export type CaCertificate = z.infer<typeof caCertificateSchema> & { id: string; created_at: number };

export const CA_ONE_AT_A_TIME = 'please submit only one certificate at a time';
export const CA_EXPIRED = 'certificate expired, "Not After" time is in the past';
export const CA_NOT_CA = 'certificate does not appear to be a CA because it is missing the "CA" basic constraint';

/** Kong's checks: one PEM certificate, not expired, with basicConstraints CA:TRUE. */
export function checkCaCertificate(e: Record<string, unknown>, now = Date.now()): FieldErrors | null {
  const pem = String(e.cert);
  const problem = certificateProblem(pem);
  if (problem) return { cert: problem };
  if (countCertificates(pem) > 1) return { '@entity': [CA_ONE_AT_A_TIME] };
  const x509 = parseCertificate(pem);
  if (Date.parse(x509.validTo) < now) return { '@entity': [CA_EXPIRED] };
  if (!x509.ca) return { '@entity': [CA_NOT_CA] };
  return null;
}

/** The `cert_digest` Kong stores: lower-case hex SHA-256 of the DER encoding. */
export function caCertificateDigest(pem: string): string {
  return parseCertificate(pem).fingerprint256.replace(/:/g, '').toLowerCase();
}

export const caCertificates = defineEntity({
  name: 'ca_certificates',
  adminPath: 'ca_certificates',
  schema: caCertificateSchema,
  uniques: ['cert_digest'],
  foreignKeys: [],
  updatedAt: false,
  check: (e) => checkCaCertificate(e),
});
