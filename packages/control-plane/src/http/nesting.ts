import { Lexer } from 'yaml';
import { HttpError, MAX_NESTING } from '@gatehouse/core';

/**
 * How deep an admin body nests (decision 26), measured on the text before any parser or recursive walk sees it:
 * JSON by its brackets, YAML by its lexer's tokens (block indentation, `-`/`?` indicators, flow brackets), form keys
 * by their segments (`a.b[c][1]`). One level is one object or array: `{"a":1}` is one level deep, `{"a":[1]}` two.
 */
export const MAX_BODY_NESTING = MAX_NESTING;

export function tooDeep(): HttpError {
  return new HttpError(400, `request body nests too deeply (limit ${MAX_BODY_NESTING})`);
}

/** JSON's structural characters, as char codes (the same in bytes and in text) */
export const JSON_CODES = { QUOTE: 0x22, BACKSLASH: 0x5c, COMMA: 0x2c, COLON: 0x3a, OPEN_SQUARE: 0x5b, CLOSE_SQUARE: 0x5d, OPEN_CURLY: 0x7b, CLOSE_CURLY: 0x7d } as const;
const { QUOTE, BACKSLASH, OPEN_SQUARE, CLOSE_SQUARE, OPEN_CURLY, CLOSE_CURLY } = JSON_CODES;

/**
 * Counts JSON nesting as the text arrives, chunk by chunk (bytes or text: the structural characters are ASCII
 * either way), and throws `tooDeep()` at the first bracket past the limit. It does not check the syntax: the parser
 * that runs afterwards does, on text known to nest within bounds.
 */
export class JsonNestingScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly limit = MAX_BODY_NESTING) {}

  feed(chunk: Uint8Array | string): void {
    const text = typeof chunk === 'string' ? chunk : null;
    const bytes = typeof chunk === 'string' ? null : chunk;
    const length = chunk.length;
    let { depth, inString, escaped } = this;
    for (let i = 0; i < length; i++) {
      const c = text !== null ? text.charCodeAt(i) : bytes![i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_CURLY || c === OPEN_SQUARE) {
        if (++depth > this.limit) throw tooDeep();
      } else if (c === CLOSE_CURLY || c === CLOSE_SQUARE) depth--;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
  }
}

export function assertJsonNesting(text: string | Uint8Array, limit = MAX_BODY_NESTING): void {
  new JsonNestingScanner(limit).feed(text);
}

/**
 * YAML nesting from the lexer's tokens (the lexer is iterative and linear; yaml's parser and composer recurse).
 * Block collections: a stack of columns, deeper columns nested in shallower ones; a mapping opens at the column of a
 * key (the content before a `:` that starts a line or follows a `- ` or `? ` indicator), a sequence at the column of
 * its `- ` (one level below a mapping whose keys sit at the same column); flow collections: their brackets. The count
 * never comes out shallower than the document.
 */
export function assertYamlNesting(text: string, limit = MAX_BODY_NESTING): void {
  const stack: Array<{ column: number; sequence: boolean }> = [];
  let flow = 0;
  let column = 0;
  /** the next content starts a line (or follows a `- ` or `? ` indicator): it may be a mapping key */
  let lineStart = true;
  /** where the content that may be a mapping key started, until a `:` or the line's end */
  let keyColumn: number | null = null;
  const open = (at: number, sequence: boolean) => {
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      if (top.column > at || (top.column === at && (top.sequence || !sequence))) stack.pop();
      else break;
    }
    stack.push({ column: at, sequence });
    if (stack.length + flow > limit) throw tooDeep();
  };
  for (const token of new Lexer().lex(text)) {
    const first = token[0];
    // markers the lexer adds (document, scalar, flow error, byte order mark) take no column; comments change nothing
    if (first === '\u0002' || first === '\u001f' || first === '\u0018' || first === '\ufeff' || first === '#') continue;
    if (token === '---' || token === '...') {
      stack.length = 0;
      flow = 0;
    } else if (flow === 0 && (token === '-' || token === '?')) {
      open(column, token === '-');
      column += 1;
      lineStart = true;
      continue;
    } else if (flow === 0 && token === ':') {
      if (keyColumn !== null) open(keyColumn, false);
      keyColumn = null;
    } else if (token === '[' || token === '{') {
      if (++flow + stack.length > limit) throw tooDeep();
    } else if (token === ']' || token === '}') {
      if (flow > 0) flow--;
    }
    const blank = /^[ \t\r\n]*$/.test(token);
    if (lineStart && !blank && flow <= 1 && token !== ':') {
      keyColumn = column;
      lineStart = false;
    }
    const lastNewline = token.lastIndexOf('\n');
    if (lastNewline < 0) column += token.length;
    else {
      column = token.length - lastNewline - 1;
      if (lastNewline === token.length - 1) {
        lineStart = true;
        keyColumn = null;
      }
    }
  }
}

/** The depth of a form key: `a` is one level, `a.b` and `a[b]` two, `a[b][1].c` four (`%5B`/`%5D` count as brackets). */
export function formKeyDepth(key: string): number {
  let depth = 1;
  const upper = key.toUpperCase();
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c === 0x2e /* . */ || c === OPEN_SQUARE) depth++;
    else if (c === 0x25 /* % */ && upper.startsWith('%5B', i)) depth++;
  }
  return depth;
}

export function assertFormNesting(keys: Iterable<string>, limit = MAX_BODY_NESTING): void {
  for (const key of keys) if (formKeyDepth(key) > limit) throw tooDeep();
}

/**
 * The depth of a value already in memory, walked with an explicit stack (YAML aliases can make a value deeper than
 * its text); stops at the first container past the limit.
 */
export function assertValueNesting(value: unknown, limit = MAX_BODY_NESTING): void {
  const pending: Array<[unknown, number]> = [[value, 1]];
  // an alias shares its anchor's object: walk a shared object again only when it is reached deeper than before
  const reached = new Map<object, number>();
  while (pending.length) {
    const [current, depth] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) throw tooDeep();
    if ((reached.get(current) ?? 0) >= depth) continue;
    reached.set(current, depth);
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
}
