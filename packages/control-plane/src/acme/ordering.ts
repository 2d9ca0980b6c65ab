import { Client, crypto as acmeCrypto } from 'acme-client';
import type { AcmeChallengeStore, AcmeConfig } from '@gatehouse/plugins';

/** how long a challenge waits for the CA (ms) */
const CHALLENGE_TTL_MS = 10 * 60_000;

/** A certificate as the CA issued it: the chain and its key, PEM. */
export interface IssuedCertificate {
  cert: string;
  key: string;
  notAfter: Date;
}

/** ACME accounts by CA and email, one key each, kept while the control plane runs (or the config's account key). */
export class AcmeAccounts {
  private readonly keys = new Map<string, Promise<Buffer>>();

  keyFor(config: AcmeConfig): Promise<Buffer> {
    const id = `${config.api_uri}\n${config.account_email ?? ''}`;
    let key = this.keys.get(id);
    if (key === undefined) {
      key = acmeCrypto.createPrivateEcdsaKey('P-256');
      this.keys.set(id, key);
    }
    return key;
  }
}

/**
 * Orders a certificate for `host` from the plugin's CA with an HTTP-01 challenge: the key authorization is left in
 * `challenges`, where every data plane answers the CA from (the acme plugin's access hook), and removed afterwards.
 */
export async function orderCertificate(config: AcmeConfig, host: string, accounts: AcmeAccounts, challenges: AcmeChallengeStore): Promise<IssuedCertificate> {
  const client = new Client({
    directoryUrl: config.api_uri,
    accountKey: await accounts.keyFor(config),
    externalAccountBinding: config.eab_kid !== null && config.eab_hmac_key !== null ? { kid: config.eab_kid, hmacKey: config.eab_hmac_key } : undefined,
    backoffAttempts: 10,
    backoffMin: 200,
    backoffMax: 2000,
  });
  const key = config.cert_type === 'ecc' ? await acmeCrypto.createPrivateEcdsaKey('P-256') : await acmeCrypto.createPrivateRsaKey(config.rsa_key_size);
  const [, csr] = await acmeCrypto.createCsr({ commonName: host, altNames: [host] }, key);
  const cert = await client.auto({
    csr,
    email: config.account_email ?? undefined,
    termsOfServiceAgreed: true,
    challengePriority: ['http-01'],
    // the CA reaches the data planes; the control plane may not see them under the certificate's name
    skipChallengeVerification: true,
    preferredChain: config.preferred_chain ?? undefined,
    challengeCreateFn: (_authz, challenge, keyAuthorization) => challenges.put(challenge.token, keyAuthorization, CHALLENGE_TTL_MS),
    challengeRemoveFn: (_authz, challenge) => challenges.delete(challenge.token),
  });
  return { cert, key: key.toString(), notAfter: acmeCrypto.readCertificateInfo(cert).notAfter };
}

/** Whether a certificate (PEM) expires within `days`. */
export function expiresWithin(certPem: string, days: number, now = Date.now()): boolean {
  return acmeCrypto.readCertificateInfo(certPem).notAfter.getTime() - now <= days * 86_400_000;
}
