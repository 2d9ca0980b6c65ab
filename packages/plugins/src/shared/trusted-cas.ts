/**
 * The CAs this process trusts for the TLS connections it opens (Kong's `lua_ssl_trusted_certificate`,
 * GATEHOUSE_UPSTREAM_CA_BUNDLE): upstream services that name no `ca_certificates`, and the receivers plugins send to
 * (tracing collectors). PEM texts; null when the setting is the system's store (the default).
 */
let trusted: string[] | null = null;

/** Sets the process's trusted CAs; an empty list is the system's store. Connections opened afterwards use them. */
export function setTrustedCaBundle(pems: readonly string[] | null): void {
  trusted = pems !== null && pems.length > 0 ? [...pems] : null;
}

/** The process's trusted CAs, or null for the system's store (with NODE_EXTRA_CA_CERTS). */
export function trustedCaBundle(): string[] | null {
  return trusted;
}
