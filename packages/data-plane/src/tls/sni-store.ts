import { createSecureContext, type SecureContext } from 'node:tls';

/** One certificate ready for handshakes: the primary pair and, when given, the alternative (other key type). */
export interface CertificatePair {
  cert: string;
  key: string;
  certAlt: string | null;
  keyAlt: string | null;
}

export function secureContextOf(pair: CertificatePair): SecureContext {
  const certs = pair.certAlt !== null && pair.keyAlt !== null ? [pair.cert, pair.certAlt] : pair.cert;
  const keys = pair.certAlt !== null && pair.keyAlt !== null ? [pair.key, pair.keyAlt] : pair.key;
  return createSecureContext({ cert: certs, key: keys });
}

/**
 * The certificates served by SNI, compiled once per snapshot (Kong's order): the exact name, then `*.` + the name
 * without its first label, then the name without its last label + `.*`; null when none matches (the listener's
 * default certificate is served then).
 */
export class SniStore {
  constructor(
    private readonly exact: ReadonlyMap<string, SecureContext>,
    private readonly wildcards: ReadonlyMap<string, SecureContext>,
  ) {}

  static empty(): SniStore {
    return new SniStore(new Map(), new Map());
  }

  /** from SNI name → context; names with a `*` are wildcards */
  static from(entries: Iterable<[string, SecureContext]>): SniStore {
    const exact = new Map<string, SecureContext>();
    const wildcards = new Map<string, SecureContext>();
    for (const [name, context] of entries) (name.includes('*') ? wildcards : exact).set(name.toLowerCase(), context);
    return new SniStore(exact, wildcards);
  }

  get size(): number {
    return this.exact.size + this.wildcards.size;
  }

  lookup(servername: string): SecureContext | null {
    const name = servername.toLowerCase();
    const exact = this.exact.get(name);
    if (exact !== undefined) return exact;
    if (this.wildcards.size === 0) return null;
    const firstDot = name.indexOf('.');
    if (firstDot > 0) {
      const suffix = this.wildcards.get(`*${name.slice(firstDot)}`);
      if (suffix !== undefined) return suffix;
    }
    const lastDot = name.lastIndexOf('.');
    if (lastDot > 0) {
      const prefix = this.wildcards.get(`${name.slice(0, lastDot)}.*`);
      if (prefix !== undefined) return prefix;
    }
    return null;
  }
}
