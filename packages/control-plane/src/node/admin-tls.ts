import { readPemPair, selfSignedDefault, type PemPair } from '@gatehouse/data-plane';
import type { AdminListenerOptions } from './options';

/**
 * Kong's `admin_listen … ssl`: the configured certificate and key, else the data directory's self-signed pair;
 * undefined when the admin API speaks plain HTTP. The same for the admin API of every mode, database or none.
 */
export async function adminTlsOf(options: Pick<AdminListenerOptions, 'adminSsl' | 'adminCertificate' | 'dataDir'>): Promise<PemPair | undefined> {
  if (!options.adminSsl) return undefined;
  return options.adminCertificate ? readPemPair(options.adminCertificate.cert, options.adminCertificate.key) : selfSignedDefault(options.dataDir);
}

/** What the admin apps log through: a message and the error behind it, as one line. */
export function adminErrorLog(log: AdminListenerOptions['log']): (message: string, err?: unknown) => void {
  return (message, err) => log.error(message, { error: err instanceof Error ? err.message : err === undefined ? undefined : String(err) });
}
