import type { EntityKind } from '../service/entity-kind';

/**
 * The order entity families appear in a document (and are written): parents before the entities that reference
 * them. Families not named here (a plugin's credential table) come where their references allow, by name.
 */
const PREFERRED = [
  'key_sets',
  'keys',
  'vaults',
  'ca_certificates',
  'certificates',
  'snis',
  'services',
  'routes',
  'consumers',
  'upstreams',
  'targets',
  'plugins',
];

function rank(name: string): number {
  const i = PREFERRED.indexOf(name);
  // credential families sit between consumers and upstreams
  return i >= 0 ? i * 10 : PREFERRED.indexOf('consumers') * 10 + 5;
}

/** Kinds in dependency order (every foreign key points to an earlier kind), ties broken by PREFERRED, then name. */
export function orderKinds(kinds: EntityKind[]): EntityKind[] {
  const byName = new Map(kinds.map((k) => [k.def.name, k]));
  const pending = new Set(byName.keys());
  const out: EntityKind[] = [];
  const ready = (name: string) =>
    byName.get(name)!.def.foreignKeys.every((fk) => fk.entity === name || !pending.has(fk.entity) || !byName.has(fk.entity));
  while (pending.size > 0) {
    const next = [...pending].filter(ready).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))[0];
    // a cycle cannot be ordered; take the best-ranked rest as it is
    const name = next ?? [...pending].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))[0]!;
    pending.delete(name);
    out.push(byName.get(name)!);
  }
  return out;
}

/** kinds whose entities reference `parent`, with the referencing field */
export function childrenOf(kinds: EntityKind[], parent: string): Array<{ kind: EntityKind; field: string }> {
  const out: Array<{ kind: EntityKind; field: string }> = [];
  for (const kind of kinds) for (const fk of kind.def.foreignKeys) if (fk.entity === parent) out.push({ kind, field: fk.field });
  return out;
}
