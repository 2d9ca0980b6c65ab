import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';

/** The first PEM certificate of a chain, parsed; throws with OpenSSL's reason. */
export function parseCertificate(pem: string): X509Certificate {
  return new X509Certificate(pem);
}

export function parsePrivateKey(pem: string): KeyObject {
  return createPrivateKey({ key: pem, format: 'pem' });
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Kong's `certificate` typedef: null when the text is a PEM certificate, else the field's message. */
export function certificateProblem(pem: string): string | null {
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) return 'invalid certificate: x509.new: not a PEM certificate';
  try {
    parseCertificate(pem);
    return null;
  } catch (err) {
    return `invalid certificate: ${reason(err)}`;
  }
}

/** Kong's `key` typedef. */
export function keyProblem(pem: string): string | null {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) return 'invalid key: pkey.new: not a PEM private key';
  try {
    parsePrivateKey(pem);
    return null;
  } catch (err) {
    return `invalid key: ${reason(err)}`;
  }
}

/** Whether the private key belongs to the certificate's public key. */
export function keyMatchesCertificate(certPem: string, keyPem: string): boolean {
  try {
    const fromCert = parseCertificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
    const fromKey = createPublicKey(parsePrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
    return Buffer.compare(fromCert, fromKey) === 0;
  } catch {
    return false;
  }
}

/** `rsa`, `ec`, `ed25519`, … of a certificate's public key. */
export function certificateKeyType(pem: string): string | undefined {
  try {
    return parseCertificate(pem).publicKey.asymmetricKeyType;
  } catch {
    return undefined;
  }
}

/** How many certificates a PEM text holds. */
export function countCertificates(pem: string): number {
  return pem.split('-----BEGIN CERTIFICATE-----').length - 1;
}
