import type { SnapshotConfig, SnapshotKey } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import { assembleSnapshotConfig } from '../publisher/read-config';
import type { DeclarativeState } from './declarative-state';

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const ref = (v: unknown): { id: string } | null => (v && typeof v === 'object' && 'id' in v ? { id: String((v as { id: unknown }).id) } : null);

/**
 * What data planes load, from a configuration held in memory: the same sections a database-backed control plane
 * publishes (keys and certificate keys are in clear in memory already).
 */
export function stateSnapshotConfig(state: DeclarativeState, plugins: PluginDefinition[]): SnapshotConfig {
  const read = (name: string) => state.entities.get(name) ?? [];
  const config = assembleSnapshotConfig(read, plugins);
  config.key_sets = read('key_sets').map((s) => ({ id: s.id, name: text(s.name) }));
  config.keys = read('keys').map((k): SnapshotKey => {
    const pem = k.pem && typeof k.pem === 'object' ? (k.pem as Record<string, unknown>) : null;
    return {
      id: k.id,
      name: text(k.name),
      kid: String(k.kid),
      set: ref(k.set),
      jwk: text(k.jwk),
      pem: pem ? { public_key: text(pem.public_key), private_key: text(pem.private_key) } : null,
    };
  });
  config.certificates = read('certificates').map((c) => ({ id: c.id, cert: String(c.cert), key: String(c.key), cert_alt: text(c.cert_alt), key_alt: text(c.key_alt) }));
  config.snis = read('snis').map((s) => ({ id: s.id, name: String(s.name), certificate: ref(s.certificate) ?? { id: '' } }));
  config.ca_certificates = read('ca_certificates').map((c) => ({ id: c.id, cert: String(c.cert) }));
  config.vaults = read('vaults').map((v) => ({
    id: v.id,
    prefix: String(v.prefix),
    name: String(v.name),
    config: v.config && typeof v.config === 'object' ? (v.config as Record<string, unknown>) : null,
  }));
  return config;
}
