import { addDigest, canonicalJson, combineSectionHashes, entityDigest, hexToSum, removeDigest, sectionSums, sumToHex } from './hash';
import type { AppliedChange, ConfigRow, CredentialSectionKey, RowOf } from './section-rows';
import { emptyConfig, SNAPSHOT_SECTIONS, type Snapshot, type SnapshotConfig, type SnapshotSection } from './snapshot';

export type * from './section-rows';

/**
 * Where a row lives in a snapshot: a section name (`services`, `consumers`, …) or, for credentials, `credentials/`
 * followed by the credential entity's name (`credentials/keyauth_credentials`).
 */
export type SectionKey = string;

export function credentialKey(entity: string): CredentialSectionKey {
  return `credentials/${entity}`;
}

/** The snapshot section a key belongs to, and the name its digests are made under. */
export function sectionOfKey(key: SectionKey): { section: SnapshotSection; entity: string } | null {
  if (key.startsWith('credentials/')) return { section: 'credentials', entity: key.slice('credentials/'.length) };
  return (SNAPSHOT_SECTIONS as readonly string[]).includes(key) && key !== 'credentials' ? { section: key as SnapshotSection, entity: key } : null;
}

/** What changed in one section: rows as they are now, and ids that are gone. */
export interface SectionChanges {
  upsert: ConfigRow[];
  delete: string[];
}

/**
 * The change from one config version to a later one, as state: every entity that changed in (`from`, `version`] as it
 * is at `version`, or its id when it is gone. Applying it to the config of any version in [`from`, `version`) gives the
 * config of `version` (state, not operations: applying twice changes nothing). `hash`/`hashes` are those of the
 * config at `version`.
 */
export interface SnapshotDelta {
  format: 'delta';
  from: number;
  version: number;
  epoch?: string;
  created_at: number;
  hash: string;
  hashes: Record<SnapshotSection, string>;
  changes: Record<SectionKey, SectionChanges>;
}

/** A delta as it travels: like a signed snapshot, and told apart from one by `from`. */
export interface SignedDelta {
  kind: 'delta';
  from: number;
  version: number;
  hash: string;
  epoch?: string;
  /** `aes-256-gcm` when the payload is sealed as a snapshot's is; absent (earlier releases): base64 of gzip(JSON(delta)) */
  cipher?: string;
  payload: string;
  /** hex HMAC-SHA256 of `payload` under the cluster secret */
  signature: string;
}

/** A delta whose result does not have the hash it announces: the receiver's config differs from the sender's. */
export class DeltaMismatchError extends Error {
  override readonly name = 'DeltaMismatchError';
}

/**
 * Points a credential's `consumer.id` at its consumer row's own id string. Parsed JSON gives every occurrence a string
 * of its own: with one credential per consumer that is one more 36-character string per consumer (about 5.6 MB at
 * 100,000). The value is the same, so nothing that reads it can tell.
 */
function shareConsumerId(row: ConfigRow, consumers: ReadonlyMap<string, ConfigRow>): void {
  const ref = (row as { consumer?: unknown }).consumer;
  if (ref === null || typeof ref !== 'object' || Object.isFrozen(ref)) return;
  const id = (ref as { id?: unknown }).id;
  if (typeof id !== 'string') return;
  const consumer = consumers.get(id);
  if (consumer !== undefined) (ref as { id: string }).id = consumer.id;
}

/**
 * A whole configuration kept as rows by id, per section, with each section's digest sum: what a control plane
 * publishes from and a data plane applies deltas to. Updating a row keeps its object (fields are replaced in place),
 * so whatever refers to a consumer object sees its new values.
 */
export class ConfigState {
  readonly sections = new Map<SectionKey, Map<string, ConfigRow>>();
  private sums: Record<SnapshotSection, bigint>;

  private constructor(
    public version: number,
    public epoch: string | null,
    public createdAt: number,
    sums: Record<SnapshotSection, bigint>,
  ) {
    this.sums = sums;
  }

  /**
   * From a full snapshot. The section hashes it carries are taken as the digest sums when they have their form (a
   * signed snapshot was verified already); otherwise they are computed.
   */
  static fromSnapshot(snapshot: Snapshot, options: { copyRows?: boolean } = {}): ConfigState {
    const copy = options.copyRows === true;
    let sums: Record<SnapshotSection, bigint> | null = {} as Record<SnapshotSection, bigint>;
    for (const section of SNAPSHOT_SECTIONS) {
      const sum = hexToSum(snapshot.hashes?.[section] ?? '');
      if (sum < 0n) {
        sums = null;
        break;
      }
      sums[section] = sum;
    }
    const state = new ConfigState(snapshot.version, snapshot.epoch ?? null, snapshot.created_at, sums ?? sectionSums(snapshot.config));
    const config = snapshot.config;
    for (const section of SNAPSHOT_SECTIONS) {
      if (section === 'credentials') {
        for (const [entity, rows] of Object.entries(config.credentials ?? {})) state.fill(credentialKey(entity), rows, copy);
      } else {
        state.fill(section, config[section] ?? [], copy);
      }
    }
    return state;
  }

  private fill(key: SectionKey, rows: readonly ConfigRow[], copy: boolean): void {
    const map = this.section(key);
    // consumers are filled before credentials (SNAPSHOT_SECTIONS order)
    const consumers = key.startsWith('credentials/') ? this.sections.get('consumers') : undefined;
    for (const row of rows) {
      const kept = copy ? { ...row } : row;
      if (consumers) shareConsumerId(kept, consumers);
      map.set(row.id, kept);
    }
  }

  /** the rows of one section (created empty when absent), of the section's row type: deltas are checked on the way in */
  section<K extends SectionKey>(key: K): Map<string, RowOf<K>> {
    let map = this.sections.get(key);
    if (!map) this.sections.set(key, (map = new Map()));
    return map as Map<string, RowOf<K>>;
  }

  get<K extends SectionKey>(key: K, id: string): RowOf<K> | undefined {
    return this.section(key).get(id);
  }

  hashes(): Record<SnapshotSection, string> {
    const out = {} as Record<SnapshotSection, string>;
    for (const section of SNAPSHOT_SECTIONS) out[section] = sumToHex(this.sums[section]);
    return out;
  }

  hash(): string {
    return combineSectionHashes(this.hashes());
  }

  /** The section sums after `changes` would be applied, without applying them. */
  private sumsAfter(changes: Record<SectionKey, SectionChanges>): Record<SnapshotSection, bigint> {
    const sums = { ...this.sums };
    for (const [key, change] of Object.entries(changes)) {
      const where = sectionOfKey(key);
      if (!where) throw new DeltaMismatchError(`unknown section '${key}'`);
      const rows = this.sections.get(key);
      const seen = new Set<string>();
      for (const id of change.delete ?? []) {
        if (seen.has(id)) continue;
        seen.add(id);
        const before = rows?.get(id);
        if (before) sums[where.section] = removeDigest(sums[where.section], entityDigest(where.entity, before));
      }
      for (const row of change.upsert ?? []) {
        if (seen.has(row.id)) throw new DeltaMismatchError(`${key} ${row.id} appears twice in one delta`);
        seen.add(row.id);
        const before = rows?.get(row.id);
        if (before) sums[where.section] = removeDigest(sums[where.section], entityDigest(where.entity, before));
        sums[where.section] = addDigest(sums[where.section], entityDigest(where.entity, row));
      }
    }
    return sums;
  }

  /** The hashes the configuration would have after `changes`, without applying them. */
  hashAfter(changes: Record<SectionKey, SectionChanges>): { hash: string; hashes: Record<SnapshotSection, string> } {
    const sums = this.sumsAfter(changes);
    const hashes = {} as Record<SnapshotSection, string>;
    for (const section of SNAPSHOT_SECTIONS) hashes[section] = sumToHex(sums[section]);
    return { hash: combineSectionHashes(hashes), hashes };
  }

  /**
   * Applies `delta`, which must follow this state (`from` ≤ version < `version`) and lead to its announced hash;
   * throws DeltaMismatchError, changing nothing, when either is not so. Returns what changed.
   */
  applyDelta(delta: SnapshotDelta): AppliedChange[] {
    if (!(delta.from <= this.version && this.version < delta.version)) {
      throw new DeltaMismatchError(`delta ${delta.from}→${delta.version} does not follow version ${this.version}`);
    }
    const sums = this.sumsAfter(delta.changes);
    const hashes = {} as Record<SnapshotSection, string>;
    for (const section of SNAPSHOT_SECTIONS) hashes[section] = sumToHex(sums[section]);
    const hash = combineSectionHashes(hashes);
    if (hash !== delta.hash) {
      throw new DeltaMismatchError(`delta ${delta.from}→${delta.version} leads to hash ${hash}, not the announced ${delta.hash}`);
    }
    const applied: AppliedChange[] = [];
    for (const [key, change] of Object.entries(delta.changes)) {
      const rows: Map<string, ConfigRow> = this.section(key);
      for (const id of change.delete ?? []) {
        const before = rows.get(id);
        if (!before) continue;
        rows.delete(id);
        applied.push({ key, id, before } as AppliedChange);
      }
      for (const row of change.upsert ?? []) {
        const existing = rows.get(row.id);
        if (existing) {
          const before = { ...existing };
          for (const field of Object.keys(existing)) if (!(field in row)) delete existing[field];
          Object.assign(existing, row);
          applied.push({ key, id: row.id, before, after: existing } as AppliedChange);
        } else {
          const after = { ...row };
          rows.set(row.id, after);
          applied.push({ key, id: row.id, after } as AppliedChange);
        }
      }
    }
    this.sums = sums;
    this.version = delta.version;
    this.epoch = delta.epoch ?? null;
    this.createdAt = delta.created_at;
    return applied;
  }

  /** the rows of a section, sorted by id (as snapshots list them) */
  list<K extends SectionKey>(key: K): Array<RowOf<K>> {
    return [...this.section(key).values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** credential entity names present */
  credentialEntities(): string[] {
    return [...this.sections.keys()].filter((k) => k.startsWith('credentials/')).map((k) => k.slice('credentials/'.length));
  }

  /** The whole configuration as a snapshot's config: every list sorted by id. */
  toConfig(): SnapshotConfig {
    const config = emptyConfig();
    const sections: Record<string, unknown> = config;
    for (const section of SNAPSHOT_SECTIONS) if (section !== 'credentials') sections[section] = this.list(section);
    for (const entity of this.credentialEntities().sort()) config.credentials[entity] = this.list(credentialKey(entity));
    return config;
  }

  toSnapshot(): Snapshot {
    const snapshot: Snapshot = {
      format: 1,
      version: this.version,
      created_at: this.createdAt,
      hash: this.hash(),
      hashes: this.hashes(),
      config: this.toConfig(),
    };
    if (this.epoch) snapshot.epoch = this.epoch;
    return snapshot;
  }
}

/** The delta that takes `state` to `next` rows: upserts of rows that differ, deletes of rows that are gone. */
export function diffSection(current: ReadonlyMap<string, ConfigRow> | undefined, next: readonly ConfigRow[]): SectionChanges {
  const upsert: ConfigRow[] = [];
  const remove: string[] = [];
  const seen = new Set<string>();
  for (const row of next) {
    seen.add(row.id);
    const before = current?.get(row.id);
    if (!before || canonicalJson(before) !== canonicalJson(row)) upsert.push(row);
  }
  if (current) for (const id of current.keys()) if (!seen.has(id)) remove.push(id);
  return { upsert, delete: remove };
}
