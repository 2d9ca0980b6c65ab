import { splitPair } from './colon-pairs';

/**
 * Kong's five operations, in Kong's order, over one collection (headers, query arguments, form or JSON fields):
 * remove; rename (only what exists); replace (only what exists); add (only what does not); append (adds another
 * value). Prepared once per config.
 */
export interface TransformPlan {
  remove: string[];
  rename: Array<[string, string]>;
  replace: Array<[string, string]>;
  add: Array<[string, string]>;
  append: Array<[string, string]>;
}

export function planOf(remove: readonly string[], rename: readonly string[], replace: readonly string[], add: readonly string[], append: readonly string[], lowerNames = false): TransformPlan | null {
  if (remove.length + rename.length + replace.length + add.length + append.length === 0) return null;
  const name = (n: string) => (lowerNames ? n.toLowerCase() : n);
  const pairs = (list: readonly string[]) =>
    list.map((entry) => {
      const [key, value] = splitPair(entry);
      return [name(key), value] as [string, string];
    });
  return {
    remove: remove.map(name),
    rename: pairs(rename).map(([from, to]) => [from, lowerNames ? to.toLowerCase() : to]),
    replace: pairs(replace),
    add: pairs(add),
    append: pairs(append),
  };
}

/** A collection of named values as the operations see it. */
export interface Fields<V> {
  has(name: string): boolean;
  get(name: string): V | undefined;
  set(name: string, value: V): void;
  delete(name: string): void;
}

/** Applies a plan; `appended` combines an existing value with one more (arrays for JSON, repeated values otherwise). */
export function applyPlan<V>(plan: TransformPlan, fields: Fields<V>, value: (text: string, name: string) => V, appended: (existing: V | undefined, text: string, name: string) => V): void {
  for (const name of plan.remove) fields.delete(name);
  for (const [from, to] of plan.rename) {
    if (!fields.has(from)) continue;
    const current = fields.get(from)!;
    fields.delete(from);
    fields.set(to, current);
  }
  for (const [name, text] of plan.replace) if (fields.has(name)) fields.set(name, value(text, name));
  for (const [name, text] of plan.add) if (!fields.has(name)) fields.set(name, value(text, name));
  for (const [name, text] of plan.append) fields.set(name, appended(fields.get(name), text, name));
}
