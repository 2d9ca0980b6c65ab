import { RE2JS } from 're2js';
import type { AtcExpression, AtcOperator, AtcPredicate, AtcValue } from './ast';
import { parseAddress, parseCidr } from './ip';

/**
 * A parser for Kong's ATC language, after the grammar of the Kong/atc-router crate (src/atc_grammar.pest):
 *
 *   matcher    = expression EOI
 *   expression = term (("&&" | "||") term)*
 *   term       = predicate | "!"? "(" expression ")"
 *   predicate  = lhs binary_operator rhs
 *   lhs        = ident "(" lhs ")" | ident          (transformations: lower, any)
 *   rhs        = "string" | r#"raw string"# | ip/cidr | integer (decimal, 0x hex, 0 octal)
 *
 * As in the crate's Pratt parser, `||` binds tighter than `&&` (operators declared later bind tighter there), and
 * both associate to the left. Errors read as the crate's (pest's) do: the position and what was expected there.
 * Regexes compile on the linear-time engine (RE2 semantics, decision 17).
 */

export class AtcSyntaxError extends Error {}

const OPERATORS: readonly AtcOperator[] = ['==', '!=', '~', '^=', '=^', '>=', '>', '<=', '<', 'in', 'not in', 'contains'];

interface Failure {
  pos: number;
  expected: string[];
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlpha = (c: string | undefined) => c !== undefined && /^[A-Za-z]$/.test(c);
const isIdentChar = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9_.]$/.test(c);

/** pest's error layout: ` --> line:col`, the line, a caret under the position (or `^--^` under a span), the message. */
export function formatAtcError(source: string, start: number, message: string, end = start): string {
  const before = source.slice(0, start);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const lineEnd = source.indexOf('\n', lineStart);
  const text = source.slice(lineStart, lineEnd < 0 ? source.length : lineEnd);
  const col = start - lineStart + 1;
  const pad = ' '.repeat(String(line).length);
  const width = Math.min(end, lineStart + text.length) - start;
  const marker = width > 1 ? `^${'-'.repeat(width - 2)}^` : '^---';
  return `${pad}--> ${line}:${col}\n${pad} |\n${line} | ${text}\n${pad} | ${' '.repeat(col - 1)}${marker}\n${pad} |\n${pad} = ${message}`;
}

function expectedList(names: string[]): string {
  if (names.length === 1) return `expected ${names[0]}`;
  if (names.length === 2) return `expected ${names[0]} or ${names[1]}`;
  return `expected ${names.slice(0, -1).join(', ')}, or ${names[names.length - 1]}`;
}

class Parser {
  private pos = 0;
  private failure: Failure = { pos: -1, expected: [] };

  constructor(private readonly src: string) {}

  parse(): AtcExpression {
    this.skip();
    const expr = this.expression();
    if (expr !== null) {
      this.skip();
      if (this.pos === this.src.length) return expr;
      this.fail(this.pos, 'EOI');
    }
    const { pos, expected } = this.failure;
    throw new AtcSyntaxError(formatAtcError(this.src, pos, expectedList(expected)));
  }

  private fail(pos: number, rule: string): null {
    if (pos > this.failure.pos) this.failure = { pos, expected: [rule] };
    else if (pos === this.failure.pos && !this.failure.expected.includes(rule)) this.failure.expected.push(rule);
    return null;
  }

  private custom(start: number, end: number, message: string): never {
    throw new AtcSyntaxError(formatAtcError(this.src, start, message, end));
  }

  private skip(): void {
    while (isSpace(this.src[this.pos])) this.pos++;
  }

  private eat(text: string): boolean {
    if (!this.src.startsWith(text, this.pos)) return false;
    this.pos += text.length;
    return true;
  }

  /** terms joined by `&&` (loosest) and `||` */
  private expression(): AtcExpression | null {
    let left = this.disjunction();
    if (left === null) return null;
    for (;;) {
      const mark = this.pos;
      this.skip();
      if (!this.src.startsWith('&&', this.pos)) {
        this.fail(this.pos, 'and_op');
        this.fail(this.pos, 'or_op');
        this.pos = mark;
        return left;
      }
      this.pos += 2;
      this.skip();
      const right = this.disjunction();
      if (right === null) return null;
      left = { kind: 'and', left, right };
    }
  }

  private disjunction(): AtcExpression | null {
    let left = this.term();
    if (left === null) return null;
    for (;;) {
      const mark = this.pos;
      this.skip();
      if (!this.src.startsWith('||', this.pos)) {
        this.pos = mark;
        return left;
      }
      this.pos += 2;
      this.skip();
      const right = this.term();
      if (right === null) return null;
      left = { kind: 'or', left, right };
    }
  }

  private term(): AtcExpression | null {
    const start = this.pos;
    const negated = this.eat('!');
    if (negated) this.skip();
    if (this.eat('(')) {
      this.skip();
      const inner = this.expression();
      if (inner === null) return null;
      this.skip();
      if (!this.eat(')')) return null;
      return negated ? { kind: 'not', expr: inner } : inner;
    }
    this.pos = start;
    const predicate = negated ? null : this.predicate();
    if (predicate !== null) return predicate;
    // a term that failed where it started is reported as `term`, not as what it tried inside
    if (this.failure.pos > start) return null;
    if (this.failure.pos === start) this.failure = { pos: -1, expected: [] };
    return this.fail(start, 'term');
  }

  private predicate(): AtcPredicate | null {
    const lhs = this.lhs();
    if (lhs === null) return null;
    this.skip();
    const op = this.operator();
    if (op === null) return this.fail(this.pos, 'binary_operator');
    this.skip();
    const start = this.pos;
    const value = this.rhs();
    if (value === null) return this.fail(start, 'rhs');
    if (op !== '~') return { kind: 'predicate', ...lhs, op, value };
    if (value.type !== 'String') return this.custom(start, this.pos, 'regex operator can only be used with String operands');
    try {
      RE2JS.compile(value.value);
    } catch (err) {
      this.custom(start, this.pos, err instanceof Error ? err.message : String(err));
    }
    return { kind: 'predicate', ...lhs, op, value: { type: 'Regex', value: value.value } };
  }

  private ident(): string | null {
    const start = this.pos;
    if (!isAlpha(this.src[this.pos])) return null;
    while (isIdentChar(this.src[this.pos])) this.pos++;
    return this.src.slice(start, this.pos);
  }

  private lhs(): { field: string; lower: boolean; any: boolean } | null {
    const start = this.pos;
    const name = this.ident();
    if (name === null) return null;
    const afterName = this.pos;
    this.skip();
    if (this.eat('(')) {
      this.skip();
      const inner = this.lhs();
      this.skip();
      if (inner !== null && this.eat(')')) {
        if (name === 'lower') return { ...inner, lower: true };
        if (name === 'any') return { ...inner, any: true };
        return this.custom(start, this.pos, `unknown transformation function: ${name}`);
      }
    }
    this.pos = afterName;
    return { field: name, lower: false, any: false };
  }

  private operator(): AtcOperator | null {
    for (const op of OPERATORS) {
      if (op === 'not in') {
        const mark = this.pos;
        if (this.eat('not')) {
          this.skip();
          if (this.eat('in')) return op;
        }
        this.pos = mark;
      } else if (this.eat(op)) return op;
    }
    return null;
  }

  private rhs(): AtcValue | null {
    return this.string() ?? this.rawString() ?? this.ip() ?? this.integer();
  }

  private string(): AtcValue | null {
    const start = this.pos;
    if (!this.eat('"')) return null;
    let out = '';
    const escapes: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', r: '\r', t: '\t' };
    while (this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === '"') {
        this.pos++;
        return { type: 'String', value: out };
      }
      if (c === '\\') {
        const escaped = escapes[this.src[this.pos + 1] ?? ''];
        if (escaped === undefined) break;
        out += escaped;
        this.pos += 2;
      } else {
        out += c;
        this.pos++;
      }
    }
    this.pos = start;
    return null;
  }

  private rawString(): AtcValue | null {
    if (!this.src.startsWith('r#"', this.pos)) return null;
    const end = this.src.indexOf('"#', this.pos + 3);
    if (end < 0) return null;
    const value = this.src.slice(this.pos + 3, end);
    this.pos = end + 2;
    return { type: 'String', value };
  }

  private ip(): AtcValue | null {
    const rest = this.src.slice(this.pos);
    const v4 = /^\d{1,3}(?:\.\d{1,3}){3}/.exec(rest)?.[0];
    const v6 = /^(?::|[0-9A-Fa-f]{1,4}):(?:[0-9A-Fa-f]{1,4}|:)*/.exec(rest)?.[0];
    for (const [address, maxDigits] of [[v4, 2], [v6, 3]] as const) {
      if (address === undefined) continue;
      const cidr = new RegExp(`^/\\d{1,${maxDigits}}`).exec(rest.slice(address.length))?.[0];
      if (cidr === undefined) continue;
      const start = this.pos;
      this.pos += address.length + cidr.length;
      const parsed = parseCidr(address + cidr);
      if (typeof parsed === 'string') this.custom(start, this.pos, parsed);
      return { type: 'IpCidr', value: parsed };
    }
    const address = v4 ?? v6;
    if (address === undefined) return null;
    const start = this.pos;
    this.pos += address.length;
    const parsed = parseAddress(address);
    if (typeof parsed === 'string') this.custom(start, this.pos, parsed);
    return { type: 'IpAddr', value: parsed };
  }

  private integer(): AtcValue | null {
    const match = /^(-?)(?:0([0-7]+)|0x([0-9A-Fa-f]+)|(\d+))/.exec(this.src.slice(this.pos));
    if (match === null) return null;
    const [text, sign, oct, hex, dec] = match;
    const start = this.pos;
    this.pos += text.length;
    const value = oct !== undefined ? parseInt(oct, 8) : hex !== undefined ? parseInt(hex, 16) : parseInt(dec!, 10);
    if (!Number.isSafeInteger(value)) this.custom(start, this.pos, 'number too large to fit in target type');
    return { type: 'Int', value: sign === '-' ? -value : value };
  }
}

/** Parses an ATC expression; throws AtcSyntaxError with the position and what was expected. */
export function parseAtc(source: string): AtcExpression {
  return new Parser(source).parse();
}
