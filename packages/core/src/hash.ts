import { createHash } from 'node:crypto';
import { SNAPSHOT_SECTIONS, type Snapshot, type SnapshotConfig, type SnapshotSection } from './snapshot';

/** JSON with object keys sorted at every level, so equal values always serialise to equal bytes. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value as object)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** 32 hex chars (128 bits of SHA-256), the width of Kong's configuration_hash. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

export function hashConfig(config: SnapshotConfig): { hash: string; hashes: Record<SnapshotSection, string> } {
  const hashes = {} as Record<SnapshotSection, string>;
  for (const section of SNAPSHOT_SECTIONS) hashes[section] = shortHash(canonicalJson(config[section]));
  const hash = shortHash(SNAPSHOT_SECTIONS.map((s) => hashes[s]).join(':'));
  return { hash, hashes };
}

export function buildSnapshot(version: number, config: SnapshotConfig, now = Math.floor(Date.now() / 1000)): Snapshot {
  const { hash, hashes } = hashConfig(config);
  return { format: 1, version, created_at: now, hash, hashes, config };
}
