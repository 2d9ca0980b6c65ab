import { JSON_CODES, tooDeep, MAX_BODY_NESTING } from '../http/nesting';
import type { Steps } from './slices';

/**
 * A JSON document read in slices (decision 26): one `JSON.parse` of a 64 MiB text holds the event loop for seconds.
 * The text's outer object and the arrays directly under it (`consumers: [...]`) are read here, each array element
 * and every other value is given to `JSON.parse` on its own, and the steps yield about every `SLICE_BYTES` of text.
 * Nesting is bounded on the way, as `assertJsonNesting` does. Anything this reader does not take as well-formed gives
 * `undefined`: the caller then reads the text the whole way (which reports errors, or tries YAML), so the result is
 * always what `JSON.parse` would give.
 */
const SLICE_BYTES = 1 << 20;

const { QUOTE, BACKSLASH, COMMA, COLON, OPEN_SQUARE, CLOSE_SQUARE, OPEN_CURLY, CLOSE_CURLY } = JSON_CODES;

class Malformed extends Error {}

/** where the text stands; every method throws Malformed at what it does not expect */
class Cursor {
  at = 0;

  constructor(readonly text: string) {}

  /** the next character code after JSON whitespace (NaN at the end) */
  peek(): number {
    const text = this.text;
    let at = this.at;
    for (let c = text.charCodeAt(at); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++at));
    this.at = at;
    return text.charCodeAt(at);
  }

  expect(code: number): void {
    if (this.peek() !== code) throw new Malformed();
    this.at++;
  }

  /** the end (exclusive) of the string starting at `from` (its opening quote) */
  stringEnd(from: number): number {
    const text = this.text;
    for (let i = from + 1; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) return i + 1;
    }
    throw new Malformed();
  }

  /** the next value, parsed; `depth` is how deep its container already nests */
  value(depth: number): unknown {
    const from = this.at;
    const end = this.valueEnd(from, depth);
    this.at = end;
    try {
      return JSON.parse(this.text.slice(from, end));
    } catch {
      throw new Malformed();
    }
  }

  /** the end (exclusive) of the value starting at `from`, counting its brackets against the nesting bound */
  private valueEnd(from: number, depth: number): number {
    const text = this.text;
    const first = text.charCodeAt(from);
    if (first === QUOTE) return this.stringEnd(from);
    if (first !== OPEN_CURLY && first !== OPEN_SQUARE) {
      let i = from;
      for (let c = text.charCodeAt(i); i < text.length && c !== COMMA && c !== CLOSE_SQUARE && c !== CLOSE_CURLY && c > 0x20; c = text.charCodeAt(++i));
      if (i === from) throw new Malformed();
      return i;
    }
    let level = 0;
    for (let i = from; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) i = this.stringEnd(i) - 1;
      else if (c === OPEN_CURLY || c === OPEN_SQUARE) {
        if (depth + ++level > MAX_BODY_NESTING) throw tooDeep();
      } else if ((c === CLOSE_CURLY || c === CLOSE_SQUARE) && --level === 0) return i + 1;
    }
    throw new Malformed();
  }
}

/** sets a property as JSON.parse does: `__proto__` becomes an own property, not the prototype */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** an array directly under the outer object, element by element */
function* arrayOf(cursor: Cursor, progress: { mark: number }): Steps<unknown[]> {
  const items: unknown[] = [];
  cursor.expect(OPEN_SQUARE);
  if (cursor.peek() === CLOSE_SQUARE) {
    cursor.at++;
    return items;
  }
  for (;;) {
    cursor.peek();
    items.push(cursor.value(2));
    if (cursor.at - progress.mark >= SLICE_BYTES) {
      progress.mark = cursor.at;
      yield;
    }
    const next = cursor.peek();
    cursor.at++;
    if (next === CLOSE_SQUARE) return items;
    if (next !== COMMA) throw new Malformed();
  }
}

function* objectSteps(cursor: Cursor): Steps<Record<string, unknown>> {
  const doc: Record<string, unknown> = {};
  const progress = { mark: 0 };
  cursor.expect(OPEN_CURLY);
  if (cursor.peek() === CLOSE_CURLY) cursor.at++;
  else {
    for (;;) {
      if (cursor.peek() !== QUOTE) throw new Malformed();
      const key = cursor.value(1) as string;
      cursor.expect(COLON);
      const value = cursor.peek() === OPEN_SQUARE ? yield* arrayOf(cursor, progress) : cursor.value(1);
      define(doc, key, value);
      const next = cursor.peek();
      cursor.at++;
      if (next === CLOSE_CURLY) break;
      if (next !== COMMA) throw new Malformed();
    }
  }
  cursor.peek();
  if (cursor.at !== cursor.text.length) throw new Malformed();
  return doc;
}

/** the JSON object `text` holds, read in slices; undefined when `text` is not one this reader takes (see above) */
export function* jsonObjectSteps(text: string): Steps<Record<string, unknown> | undefined> {
  try {
    return yield* objectSteps(new Cursor(text));
  } catch (err) {
    if (err instanceof Malformed) return undefined;
    throw err;
  }
}
