import { schemaViolation } from '../errors';
import { findingsToFields, MAX_ARRAY_ITEMS, MAX_NESTING } from './input-bounds';

/**
 * Kong's decoding of form fields (x-www-form-urlencoded, multipart fields) into a nested value:
 *   config.anonymous=x            → {config: {anonymous: 'x'}}       (dots nest)
 *   paths=/a&paths=/b             → {paths: ['/a', '/b']}             (repeated keys)
 *   paths[]=/a&paths[]=/b         → {paths: ['/a', '/b']}
 *   paths[2]=/b&paths[1]=/a       → {paths: ['/a', '/b']}             (1-based, ordered by index)
 *   config.key_names[1]=apikey    → {config: {key_names: ['apikey']}}
 *   headers[x-v]=1                → {headers: {'x-v': '1'}}           (non-numeric brackets build maps)
 *   sources[1].ip=a&sources[1].port=1 → {sources: [{ip: 'a', port: '1'}]}
 * Values stay strings; `coerceInput` gives them their types from the schema. A single value stays a single value
 * here (the schema decides whether it becomes a one-element array). An array is given either by index (ordered by
 * index) or by `[]` and repeated keys (in arrival order); mixing the two, or giving an index twice, is a schema
 * violation, as is an index below 1 or above MAX_ARRAY_ITEMS. Keys that start or end with a dot are taken literally, as Kong does,
 * and so is a key with an unclosed bracket or an empty dotted segment. When two keys disagree on the shape of a field
 * (`a=1` and `a.b=2`), the shape that came first is kept. A key nested deeper than MAX_DEPTH is taken literally, so
 * a hostile key cannot exhaust the stack.
 */

const MAX_DEPTH = MAX_NESTING;

type Segment = { kind: 'key'; key: string } | { kind: 'index'; index: number } | { kind: 'append' };

class ObjectNode {
  readonly entries = new Map<string, Node>();
}

class ArrayNode {
  readonly items: Array<{ index: number | null; node: Node }> = [];

  static of(...values: string[]): ArrayNode {
    const arr = new ArrayNode();
    for (const value of values) arr.items.push({ index: null, node: value });
    return arr;
  }
}

type Node = string | ObjectNode | ArrayNode;

export function decodeFormPairs(pairs: Array<[string, string]>): Record<string, unknown> {
  let root: Node = new ObjectNode();
  for (const [rawKey, value] of pairs) {
    root = put(root, parseKey(rawKey), value);
  }
  return finish(root, []) as Record<string, unknown>;
}

/** Splits `a.b[1][x].c` into segments; the first segment is always a key. */
function parseKey(rawKey: string): Segment[] {
  const key = rawKey.replace(/%5B(.*?)%5D/gi, '[$1]');
  const literal: Segment[] = [{ kind: 'key', key: rawKey }];
  if (key.length === 0 || key.startsWith('.') || key.endsWith('.')) return literal;

  let i = 1;
  while (i < key.length && key[i] !== '.' && key[i] !== '[') i++;
  const segments: Segment[] = [{ kind: 'key', key: key.slice(0, i) }];
  while (i < key.length) {
    if (key[i] === '.') {
      let end = i + 1;
      while (end < key.length && key[end] !== '.' && key[end] !== '[') end++;
      const part = key.slice(i + 1, end);
      if (part === '') return literal;
      segments.push({ kind: 'key', key: part });
      i = end;
    } else {
      const close = key.indexOf(']', i);
      if (close < 0) return literal;
      const inner = key.slice(i + 1, close);
      if (inner === '') segments.push({ kind: 'append' });
      else if (/^-?\d+$/.test(inner)) segments.push({ kind: 'index', index: arrayIndex(inner, key.slice(0, i)) });
      else segments.push({ kind: 'key', key: inner });
      i = close + 1;
    }
    if (segments.length > MAX_DEPTH) return literal;
  }
  return segments;
}

/** Kong's arrays count from 1; an index outside 1…MAX_ARRAY_ITEMS is refused with the field named. */
function arrayIndex(text: string, field: string): number {
  const index = Number(text);
  if (!Number.isSafeInteger(index) || index < 1 || index > MAX_ARRAY_ITEMS) {
    throw schemaViolation(findingsToFields([{ path: field.split('.'), message: `invalid array index ${text}: expected 1 to ${MAX_ARRAY_ITEMS}` }]));
  }
  return index;
}

/** Puts `value` at `segments` below `slot` and returns what the slot holds afterwards. */
function put(slot: Node | undefined, segments: Segment[], value: string): Node {
  if (segments.length === 0) {
    if (slot === undefined) return value;
    if (typeof slot === 'string') return ArrayNode.of(slot, value);
    if (slot instanceof ArrayNode) {
      slot.items.push({ index: null, node: value });
      return slot;
    }
    return slot;
  }

  const [segment, ...rest] = segments;
  if (segment.kind === 'key') {
    const obj = slot === undefined ? new ObjectNode() : slot;
    if (!(obj instanceof ObjectNode)) return obj;
    obj.entries.set(segment.key, put(obj.entries.get(segment.key), rest, value));
    return obj;
  }

  let arr: ArrayNode;
  if (slot === undefined) arr = new ArrayNode();
  else if (typeof slot === 'string') arr = ArrayNode.of(slot);
  else if (slot instanceof ArrayNode) arr = slot;
  else return slot;

  const index = segment.kind === 'index' ? segment.index : null;
  if (rest.length === 0) {
    arr.items.push({ index, node: value });
    return arr;
  }
  // `a[1].b` and `a[1].c` fill the same element; Kong files `a[].b` under the first element
  const at = index ?? 1;
  const existing = arr.items.find((item) => item.index === at && typeof item.node !== 'string');
  if (existing) existing.node = put(existing.node, rest, value);
  else arr.items.push({ index: at, node: put(undefined, rest, value) });
  return arr;
}

function finish(node: Node, path: string[]): unknown {
  if (typeof node === 'string') return node;
  if (node instanceof ObjectNode) {
    // fromEntries defines own properties, so a `__proto__` field stays a plain field
    return Object.fromEntries([...node.entries].map(([key, child]) => [key, finish(child, [...path, key])]));
  }
  const indexed = node.items.filter((item) => item.index !== null).sort((a, b) => (a.index as number) - (b.index as number));
  const appended = node.items.filter((item) => item.index === null);
  // `a[1]=x&a=y` or `a[1]=x&a[1]=y`: which element is meant cannot be told
  if (indexed.length > 0 && appended.length > 0) throw ambiguousArray(path, 'mixes indexed and unindexed elements');
  if (indexed.some((item, i) => i > 0 && item.index === indexed[i - 1]!.index)) throw ambiguousArray(path, 'gives an index twice');
  return [...indexed, ...appended].map((item) => finish(item.node, path));
}

function ambiguousArray(path: string[], problem: string) {
  return schemaViolation(findingsToFields([{ path: path.length ? path : ['@entity'], message: `invalid array: ${problem}` }]));
}
