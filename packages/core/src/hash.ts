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

const MOD = 1n << 128n;

/**
 * One entity's contribution to its section's hash: 128 bits of SHA-256 over where it lives (`entity`: the section, or
 * the credential entity's name) and its canonical JSON.
 */
export function entityDigest(entity: string, row: unknown): bigint {
  return BigInt(`0x${createHash('sha256').update(entity).update('\0').update(canonicalJson(row)).digest('hex').slice(0, 32)}`);
}

/**
 * A section's hash is the sum (mod 2^128) of its entities' digests: independent of order, so adding, changing or
 * removing one entity updates it with two digests instead of hashing the whole section again.
 */
export function addDigest(sum: bigint, digest: bigint): bigint {
  return (sum + digest) % MOD;
}

export function removeDigest(sum: bigint, digest: bigint): bigint {
  return (sum - digest + MOD) % MOD;
}

export function sumToHex(sum: bigint): string {
  return sum.toString(16).padStart(32, '0');
}

export function hexToSum(hex: string): bigint {
  return /^[0-9a-f]{32}$/.test(hex) ? BigInt(`0x${hex}`) : -1n;
}

/** The overall hash from the section hashes. */
export function combineSectionHashes(hashes: Record<SnapshotSection, string>): string {
  return shortHash(SNAPSHOT_SECTIONS.map((s) => hashes[s]).join(':'));
}

/** The digest sums of every section, computed from scratch. */
export function sectionSums(config: SnapshotConfig): Record<SnapshotSection, bigint> {
  const sums = {} as Record<SnapshotSection, bigint>;
  for (const section of SNAPSHOT_SECTIONS) {
    let sum = 0n;
    if (section === 'credentials') {
      for (const [entity, rows] of Object.entries(config.credentials ?? {})) for (const row of rows) sum = addDigest(sum, entityDigest(entity, row));
    } else {
      for (const row of (config[section] ?? []) as unknown[]) sum = addDigest(sum, entityDigest(section, row));
    }
    sums[section] = sum;
  }
  return sums;
}

export function hashConfig(config: SnapshotConfig): { hash: string; hashes: Record<SnapshotSection, string> } {
  const sums = sectionSums(config);
  const hashes = {} as Record<SnapshotSection, string>;
  for (const section of SNAPSHOT_SECTIONS) hashes[section] = sumToHex(sums[section]);
  return { hash: combineSectionHashes(hashes), hashes };
}

export function buildSnapshot(version: number, config: SnapshotConfig, now = Math.floor(Date.now() / 1000)): Snapshot {
  const { hash, hashes } = hashConfig(config);
  return { format: 1, version, created_at: now, hash, hashes, config };
}
