import { isLoopback } from '@gatehouse/control-plane';
import type { Listen, Settings } from './settings';

/** HMAC-SHA256 wants a key of its output's size at least: shorter secrets are refused at start. */
export const MIN_CLUSTER_SECRET_BYTES = 32;

/** Throws a configuration error (the process exits non-zero) for a cluster secret under 32 bytes. */
export function checkClusterSecret(secret: string): void {
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < MIN_CLUSTER_SECRET_BYTES) {
    throw new Error(
      `GATEHOUSE_CLUSTER_SECRET is too short (${bytes} bytes): it must be at least ${MIN_CLUSTER_SECRET_BYTES} bytes; ` +
        'generate one with `openssl rand -hex 32` and give the same value to the control plane and every data plane',
    );
  }
}

/** The warning logged at every start when the admin API is reachable beyond loopback with RBAC off, else null. */
export function adminExposureWarning(settings: Pick<Settings, 'adminListen' | 'enforceRbac'>, listen: Listen = settings.adminListen): string | null {
  if (settings.enforceRbac !== 'off' || isLoopback(listen.host)) return null;
  return (
    `the admin API listens on ${listen.host}:${listen.port}, reachable beyond this machine, with RBAC off: ` +
    'anyone who can reach it can change the configuration and read private keys. ' +
    'Set GATEHOUSE_ENFORCE_RBAC (with GATEHOUSE_ADMIN_TOKEN) or bind GATEHOUSE_ADMIN_LISTEN to 127.0.0.1'
  );
}
