import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';

/** Who a data plane says it is in its heartbeats. */
export interface DataPlaneIdentity {
  id: string;
  hostname: string;
  ip: string;
  /** the Gatehouse version it runs */
  version: string;
  /** Kong's `cluster_dp_labels` */
  labels?: Record<string, string>;
  /** the plugins it can run, so the control plane can tell a config it cannot (Kong's plugin_set_incompatible) */
  plugins?: string[];
}

/** The first non-internal IPv4 address, else 127.0.0.1. */
export function localIpAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  return '127.0.0.1';
}

/**
 * A data plane id that survives restarts: kept in `<dataDir>/node_id`, created on first use (Kong keeps its
 * node id in its prefix the same way). Without a data directory the id is new for every process.
 */
export function loadOrCreateDataPlaneId(dataDir: string | null): string {
  if (!dataDir) return randomUUID();
  const file = join(dataDir, 'node_id');
  try {
    const id = readFileSync(file, 'utf8').trim();
    if (id) return id;
  } catch {}
  const id = randomUUID();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}

/** Fills what the caller left out from this machine. */
export function dataPlaneIdentity(partial: Partial<DataPlaneIdentity> & { id: string }): DataPlaneIdentity {
  return {
    id: partial.id,
    hostname: partial.hostname ?? hostname(),
    ip: partial.ip ?? localIpAddress(),
    version: partial.version ?? '0.1.0',
    ...(partial.labels ? { labels: partial.labels } : {}),
    ...(partial.plugins ? { plugins: partial.plugins } : {}),
  };
}
