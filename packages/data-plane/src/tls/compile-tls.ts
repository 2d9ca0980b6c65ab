import type { SecureContext } from 'node:tls';
import type { Service, SnapshotConfig } from '@gatehouse/core';
import { secureContextOf, SniStore, type CertificatePair } from './sni-store';
import { upstreamTls, type UpstreamTls } from './upstream-tls';
import type { VaultResolver } from './vault-resolver';

/** What the TLS listener and the upstream connections read, built once per snapshot. */
export interface CompiledTls {
  sni: SniStore;
  /** service id → upstream TLS settings, for services speaking TLS */
  upstream: ReadonlyMap<string, UpstreamTls>;
  /** what could not be loaded on this node (an unresolved vault reference, for instance) */
  problems: readonly TlsCompileProblem[];
}

export interface TlsCompileProblem {
  entity: string;
  id: string;
  message: string;
}

export const EMPTY_TLS: CompiledTls = { sni: SniStore.empty(), upstream: new Map(), problems: [] };

/**
 * Certificates (vault references resolved), their SNIs, and per-service upstream TLS. A certificate that cannot be
 * loaded (a reference this node cannot resolve, a pair that does not load) is left out and reported: its SNIs get
 * the default certificate, the rest of the snapshot still loads.
 */
export function compileTls(config: Pick<SnapshotConfig, 'certificates' | 'snis' | 'ca_certificates'>, services: readonly Service[], vaults: VaultResolver): CompiledTls {
  const problems: TlsCompileProblem[] = [];
  const report = (p: TlsCompileProblem) => problems.push(p);
  const certificates = config.certificates ?? [];
  if (certificates.length === 0 && !services.some((s) => s.protocol === 'https' && (s.tls_verify === true || s.client_certificate != null))) {
    return EMPTY_TLS;
  }
  const pairs = new Map<string, CertificatePair>();
  for (const c of certificates) {
    try {
      pairs.set(c.id, {
        cert: vaults.resolve(c.cert),
        key: vaults.resolve(c.key),
        certAlt: c.cert_alt === null ? null : vaults.resolve(c.cert_alt),
        keyAlt: c.key_alt === null ? null : vaults.resolve(c.key_alt),
      });
    } catch (err) {
      report({ entity: 'certificates', id: c.id, message: (err as Error).message });
    }
  }
  const contexts = new Map<string, SecureContext>();
  const contextOf = (id: string): SecureContext | null => {
    const ready = contexts.get(id);
    if (ready) return ready;
    const pair = pairs.get(id);
    if (!pair) return null;
    try {
      const context = secureContextOf(pair);
      contexts.set(id, context);
      return context;
    } catch (err) {
      pairs.delete(id);
      report({ entity: 'certificates', id, message: `cannot load certificate: ${(err as Error).message}` });
      return null;
    }
  };
  const entries: Array<[string, SecureContext]> = [];
  for (const sni of config.snis ?? []) {
    const context = contextOf(sni.certificate.id);
    if (context) entries.push([sni.name, context]);
  }
  const cas = new Map((config.ca_certificates ?? []).map((c) => [c.id, c.cert]));
  const upstream = new Map<string, UpstreamTls>();
  for (const service of services) {
    if (service.protocol !== 'https' && service.protocol !== 'grpcs' && service.protocol !== 'tls') continue;
    const ca: string[] = [];
    for (const id of service.ca_certificates ?? []) {
      const pem = cas.get(id);
      if (pem) ca.push(pem);
      else report({ entity: 'services', id: service.id, message: `ca_certificates: no CA certificate ${id}` });
    }
    let clientCert: { cert: string; key: string } | null = null;
    if (service.client_certificate) {
      const pair = pairs.get(service.client_certificate.id);
      if (pair) clientCert = { cert: pair.cert, key: pair.key };
      else report({ entity: 'services', id: service.id, message: `client_certificate: no usable certificate ${service.client_certificate.id}` });
    }
    upstream.set(
      service.id,
      upstreamTls({ host: service.host, verify: service.tls_verify === true, verifyDepth: service.tls_verify_depth ?? null, ca: ca.length > 0 ? ca : null, clientCert }),
    );
  }
  return { sni: SniStore.from(entries), upstream, problems };
}
