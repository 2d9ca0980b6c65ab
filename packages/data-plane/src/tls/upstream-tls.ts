import { createHash } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { checkServerIdentity } from 'node:tls';
import { setTrustedCaBundle, trustedCaBundle } from '@gatehouse/plugins';

/** The TLS side of a connection to an upstream, as undici's `connect` options take it. */
export interface UpstreamTlsOptions {
  rejectUnauthorized: boolean;
  servername?: string;
  /** trusted CAs (PEM); undefined = the system's */
  ca?: string[];
  /** client certificate and key presented to the upstream (mTLS) */
  cert?: string;
  key?: string;
  checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
}

export interface UpstreamTls {
  options: UpstreamTlsOptions;
  /** part of the pool key: two services with other TLS settings never share connections */
  key: string;
}

/** How many certificates lie between the peer's and its root (Kong's/OpenSSL's verify depth counts them). */
function chainDepth(cert: PeerCertificate): number {
  let depth = 0;
  let current = cert as PeerCertificate & { issuerCertificate?: PeerCertificate };
  const seen = new Set<string>();
  while (current.issuerCertificate && current.issuerCertificate !== current && !seen.has(current.fingerprint256)) {
    seen.add(current.fingerprint256);
    current = current.issuerCertificate as PeerCertificate & { issuerCertificate?: PeerCertificate };
    depth++;
  }
  return depth;
}

export interface UpstreamTlsInput {
  host: string;
  verify: boolean;
  verifyDepth: number | null;
  ca: string[] | null;
  clientCert: { cert: string; key: string } | null;
}

/**
 * Sets the process's trusted CAs (Kong's lua_ssl_trusted_certificate, GATEHOUSE_UPSTREAM_CA_BUNDLE): services that
 * name no CA in configs compiled afterwards, and the receivers plugins send to, are verified against them.
 */
export function setUpstreamCaBundle(pems: string[] | null): void {
  setTrustedCaBundle(pems);
}

/** Compiled once per service and snapshot. */
export function upstreamTls(given: UpstreamTlsInput): UpstreamTls {
  const input = given.ca && given.ca.length > 0 ? given : { ...given, ca: trustedCaBundle() };
  const options: UpstreamTlsOptions = { rejectUnauthorized: input.verify };
  // SNI carries host names only; Node refuses an IP address as servername
  if (!/^[\d.]+$/.test(input.host) && !input.host.includes(':')) options.servername = input.host;
  if (input.ca && input.ca.length > 0) options.ca = input.ca;
  if (input.clientCert) {
    options.cert = input.clientCert.cert;
    options.key = input.clientCert.key;
  }
  const depth = input.verifyDepth;
  if (input.verify && depth !== null) {
    options.checkServerIdentity = (host, cert) => {
      const identity = checkServerIdentity(host, cert);
      if (identity) return identity;
      const found = chainDepth(cert);
      return found > depth + 1 ? new Error(`certificate chain too long (${found} > ${depth + 1})`) : undefined;
    };
  }
  const digest = createHash('sha256')
    .update(JSON.stringify([input.verify, depth, input.ca ?? null, input.clientCert?.cert ?? null, input.clientCert?.key ?? null]))
    .digest('hex')
    .slice(0, 16);
  return { options, key: digest };
}
