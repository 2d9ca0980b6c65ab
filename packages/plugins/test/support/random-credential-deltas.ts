import { isDeepStrictEqual } from 'node:util';
import { ConfigState, emptyConfig, type AppliedChange, type ConfigRow, type SectionChanges, type SnapshotConfig } from '@gatehouse/core';
import type { RowLookup } from '../../src/shared/credential-index';
import { seededRandom } from '@gatehouse/testkit';

/** One credential entity as the random deltas write it. */
export interface CredentialKind {
  /** the entity name, e.g. `basicauth_credentials` */
  entity: string;
  /** the field that names a credential and is unique among its rows (`username`, `key`, …); null when none (acls) */
  nameField: string | null;
  /** the other fields of a created or changed row */
  fields(random: () => number, n: number): Record<string, unknown>;
}

const NAME_POOL = 12;

/**
 * A configuration of consumers and one credential entity that random deltas change, applied by `ConfigState` as a
 * data plane applies them: consumers and credentials created, changed (a credential's name, other fields or consumer)
 * and deleted, one to three rows per delta. A deleted consumer's credentials are mostly deleted with it (the foreign
 * key's cascade), sometimes left behind. Names are unique among credential rows, and a name freed in a delta may be
 * taken by another credential in the same delta, listed before or after the one that let it go.
 */
export class RandomCredentialDeltas {
  readonly state: ConfigState;
  readonly rows: RowLookup = (section, id) => this.state.get(section, id);
  private readonly random: () => number;
  private readonly section: string;
  private counter = 0;

  constructor(
    private readonly kind: CredentialKind,
    seed: number,
  ) {
    this.random = seededRandom(seed);
    this.section = `credentials/${kind.entity}`;
    const config = emptyConfig();
    config.credentials = { [kind.entity]: [] };
    this.state = ConfigState.fromSnapshot({ format: 1, version: 0, created_at: 0, hash: '', hashes: {} as never, config });
  }

  config(): SnapshotConfig {
    return this.state.toConfig();
  }

  /** Makes one random delta, applies it and returns what changed. */
  step(): AppliedChange[] {
    const changes: Record<string, SectionChanges> = {};
    // which section the delta lists first (and so is applied first) varies
    for (const key of this.random() < 0.5 ? ['consumers', this.section] : [this.section, 'consumers']) changes[key] = { upsert: [], delete: [] };
    const pending = new Pending(this.state, this.section, this.kind.nameField);
    const count = 1 + Math.floor(this.random() * 3);
    for (let i = 0; i < count; i++) this.stage(pending, changes);
    // rows apply in the order a delta lists them: a credential may take a name before the one that held it lets go
    for (const section of Object.values(changes)) section.upsert = this.shuffled(section.upsert);
    const { hash, hashes } = this.state.hashAfter(changes);
    return this.state.applyDelta({ format: 'delta', from: this.state.version, version: this.state.version + 1, created_at: 0, hash, hashes, changes });
  }

  private pick<T>(list: readonly T[]): T | undefined {
    return list.length ? list[Math.floor(this.random() * list.length)] : undefined;
  }

  private shuffled<T>(list: readonly T[]): T[] {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  private id(prefix: string): string {
    // random ids, so that rows created later do not always sort last
    return `${prefix}-${Math.floor(this.random() * 0xffffff).toString(16).padStart(6, '0')}-${(this.counter++).toString(36)}`;
  }

  private freeName(pending: Pending): string | undefined {
    const free = Array.from({ length: NAME_POOL }, (_, i) => `name-${i}`).filter((n) => !pending.names.has(n));
    return this.pick(free) ?? `name-x${this.counter++}`;
  }

  private credentialRow(pending: Pending, id: string, consumerId: string, name: string | undefined): ConfigRow {
    const row: ConfigRow = { id, consumer: { id: consumerId }, created_at: 1, ...this.kind.fields(this.random, this.counter++) };
    if (this.kind.nameField && name !== undefined) {
      row[this.kind.nameField] = name;
      pending.names.set(name, id);
    }
    return row;
  }

  private stage(pending: Pending, changes: Record<string, SectionChanges>): void {
    const consumers = changes.consumers!;
    const credentials = changes[this.section]!;
    const op = this.random();
    const liveConsumers = pending.consumers().filter((id) => !pending.touched.has(id));
    const liveCredentials = pending.credentials().filter((id) => !pending.touched.has(id));
    if (op < 0.15 || liveConsumers.length === 0) {
      const id = this.id('consumer');
      consumers.upsert.push({ id, username: `user-${this.counter++}`, custom_id: null, tags: null, created_at: 1, updated_at: 1 });
      pending.touched.add(id);
      pending.createdConsumers.add(id);
    } else if (op < 0.25) {
      const id = this.pick(liveConsumers)!;
      consumers.upsert.push({ ...this.state.get('consumers', id)!, username: `renamed-${this.counter++}` });
      pending.touched.add(id);
    } else if (op < 0.32) {
      const id = this.pick(liveConsumers)!;
      const own = pending.credentials().filter((c) => (this.state.get(this.section, c)?.consumer as { id: string } | undefined)?.id === id);
      if (own.some((c) => pending.touched.has(c))) return;
      consumers.delete.push(id);
      pending.touched.add(id);
      pending.deletedConsumers.add(id);
      if (this.random() < 0.2) return; // left behind, as without a cascade
      for (const c of own) this.deleteCredential(pending, credentials, c);
    } else if (op < 0.62 || liveCredentials.length === 0) {
      const consumer = this.pick(pending.consumers().filter((id) => !pending.deletedConsumers.has(id)));
      if (!consumer) return;
      const id = this.id('cred');
      credentials.upsert.push(this.credentialRow(pending, id, consumer, this.freeName(pending)));
      pending.touched.add(id);
    } else if (op < 0.88) {
      const id = this.pick(liveCredentials)!;
      const row = this.state.get(this.section, id)!;
      const nameField = this.kind.nameField;
      const oldName = nameField ? (row[nameField] as string) : undefined;
      const how = this.random();
      let consumer = (row.consumer as { id: string }).id;
      let name = oldName;
      if (how < 0.4 && nameField) {
        pending.names.delete(oldName!);
        name = this.freeName(pending);
      } else if (how < 0.7) {
        consumer = this.pick(pending.consumers().filter((c) => !pending.deletedConsumers.has(c))) ?? consumer;
      }
      credentials.upsert.push(this.credentialRow(pending, id, consumer, name));
      pending.touched.add(id);
    } else {
      this.deleteCredential(pending, credentials, this.pick(liveCredentials)!);
    }
  }

  private deleteCredential(pending: Pending, credentials: SectionChanges, id: string): void {
    const nameField = this.kind.nameField;
    const row = this.state.get(this.section, id);
    if (nameField && row && pending.names.get(row[nameField] as string) === id) pending.names.delete(row[nameField] as string);
    credentials.delete.push(id);
    pending.touched.add(id);
    pending.deletedCredentials.add(id);
  }
}

/** What one delta in the making has changed so far: rows it touched, names taken, consumers and credentials gone. */
class Pending {
  readonly touched = new Set<string>();
  readonly createdConsumers = new Set<string>();
  readonly deletedConsumers = new Set<string>();
  readonly deletedCredentials = new Set<string>();
  /** credential name → credential id, as the delta leaves them */
  readonly names = new Map<string, string>();

  constructor(
    private readonly state: ConfigState,
    private readonly section: string,
    nameField: string | null,
  ) {
    if (nameField) for (const row of state.section(section).values()) this.names.set(row[nameField] as string, row.id);
  }

  consumers(): string[] {
    return [...this.state.section('consumers').keys(), ...this.createdConsumers].filter((id) => !this.deletedConsumers.has(id));
  }

  credentials(): string[] {
    return [...this.state.section(this.section).keys()].filter((id) => !this.deletedCredentials.has(id));
  }
}

/** A plugin's index as the random deltas check it. */
export interface IndexUnderTest<Index> {
  compile(config: SnapshotConfig): Index;
  update(index: Index, changes: readonly AppliedChange[], rows: RowLookup): boolean;
  /** the delta keys the index reads; changes of other sections are not given to `update`, as the data plane does */
  sections: readonly string[];
  /** the index's lookups as plain data, to compare */
  normalise(index: Index): unknown;
}

/**
 * Follows `steps` random deltas with `update` and compares the index after each with the one `compile` builds from the
 * resulting configuration. Returns where they first differ, or null; and how many entries the credential section
 * held at most, so a test can tell the sequence did build something.
 */
export function firstDivergence<Index>(kind: CredentialKind, plugin: IndexUnderTest<Index>, seed: number, steps = 200): { divergence: string | null; largest: number } {
  const deltas = new RandomCredentialDeltas(kind, seed);
  const index = plugin.compile(deltas.config());
  let largest = 0;
  for (let step = 1; step <= steps; step++) {
    const changes = deltas.step().filter((c) => plugin.sections.includes(c.key));
    largest = Math.max(largest, deltas.state.section(`credentials/${kind.entity}`).size);
    if (!plugin.update(index, changes, deltas.rows)) return { divergence: `seed ${seed}, step ${step}: the update was refused`, largest };
    const actual = plugin.normalise(index);
    const expected = plugin.normalise(plugin.compile(deltas.config()));
    if (!isDeepStrictEqual(actual, expected)) {
      return { divergence: `seed ${seed}, step ${step}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`, largest };
    }
  }
  return { divergence: null, largest };
}

/** Variants of an update that leave things out, which the comparison must catch. */
export const BROKEN_UPDATES = {
  'skips deleted credentials': (changes: readonly AppliedChange[]) => changes.filter((c) => c.key === 'consumers' || c.after),
  'skips deleted consumers': (changes: readonly AppliedChange[]) => changes.filter((c) => c.key !== 'consumers' || c.after),
  'ignores what a changed row was': (changes: readonly AppliedChange[]) => changes.map((c): AppliedChange => (c.after ? ({ key: c.key, id: c.id, after: c.after } as AppliedChange) : c)),
} as const;

/** Sorted entries of a map, values made plain by `value`. */
export function sortedEntries<K, V>(map: ReadonlyMap<K, V>, value: (v: V) => unknown): Array<[K, unknown]> {
  return [...map].map(([k, v]): [K, unknown] => [k, value(v)]).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
}

/** What an auth index entry's success outcome says: credential, and the consumer as it is now. */
export function outcomeOf(result: { consumer: { id: string; username?: string | null } | null; credential: { id: string | null; identifier: string; consumerId: string | null } }): unknown {
  return { credential: result.credential, consumer: result.consumer ? { id: result.consumer.id, username: result.consumer.username ?? null } : null };
}
