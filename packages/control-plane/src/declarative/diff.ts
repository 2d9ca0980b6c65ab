import { canonicalJson } from '@gatehouse/core';

/** One entity of a diff: its family, id and name (when it has an endpoint key). */
export interface DiffEntity {
  type: string;
  id: string;
  name?: string;
}

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export interface ConfigDiff {
  created: DiffEntity[];
  changed: Array<DiffEntity & { fields: FieldChange[] }>;
  deleted: DiffEntity[];
}

/** Entities of one family, keyed by id, in their document form. */
export type FamilyEntities = Map<string, Record<string, unknown>>;

export interface DiffFamily {
  type: string;
  endpointKey?: string;
  current: FamilyEntities;
  desired: FamilyEntities;
  /** ids whose desired form was given without timestamps: those are not compared */
  untimed?: Set<string>;
}

const TIMESTAMPS = new Set(['created_at', 'updated_at']);

function entry(family: DiffFamily, id: string, entity: Record<string, unknown>): DiffEntity {
  const name = family.endpointKey ? entity[family.endpointKey] : undefined;
  return typeof name === 'string' ? { type: family.type, id, name } : { type: family.type, id };
}

/**
 * What applying `desired` over `current` would do, per entity: created, changed (with the fields that differ) and
 * deleted. Timestamps count only where the desired entity gives them.
 */
export function diffConfigs(families: DiffFamily[]): ConfigDiff {
  const out: ConfigDiff = { created: [], changed: [], deleted: [] };
  for (const family of families) {
    for (const [id, want] of family.desired) {
      const have = family.current.get(id);
      if (!have) {
        out.created.push(entry(family, id, want));
        continue;
      }
      const fields: FieldChange[] = [];
      const names = new Set([...Object.keys(have), ...Object.keys(want)]);
      for (const field of names) {
        if (TIMESTAMPS.has(field) && !(field in want)) continue;
        if (canonicalJson(have[field] ?? null) !== canonicalJson(want[field] ?? null)) fields.push({ field, from: have[field] ?? null, to: want[field] ?? null });
      }
      if (fields.length) out.changed.push({ ...entry(family, id, want), fields });
    }
    for (const [id, have] of family.current) if (!family.desired.has(id)) out.deleted.push(entry(family, id, have));
  }
  return out;
}

export function isEmptyDiff(diff: ConfigDiff): boolean {
  return diff.created.length === 0 && diff.changed.length === 0 && diff.deleted.length === 0;
}

/** A readable rendering: `+ created`, `~ changed` with `field: old → new`, `- deleted`, and a summary line. */
export function renderDiff(diff: ConfigDiff): string {
  const label = (e: DiffEntity) => `${e.type} ${e.name ? `${e.name} (${e.id})` : e.id}`;
  const show = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : canonicalJson(v));
  const lines: string[] = [];
  for (const e of diff.created) lines.push(`+ create ${label(e)}`);
  for (const e of diff.changed) {
    lines.push(`~ update ${label(e)}`);
    for (const f of e.fields) lines.push(`    ${f.field}: ${show(f.from)} → ${show(f.to)}`);
  }
  for (const e of diff.deleted) lines.push(`- delete ${label(e)}`);
  lines.push(`Summary: ${diff.created.length} created, ${diff.changed.length} updated, ${diff.deleted.length} deleted`);
  return lines.join('\n');
}
