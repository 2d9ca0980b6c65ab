import { describe, expect, it } from '@jest/globals';
import { conjunctsOf, predicatesOf, type AtcExpression } from './ast';
import { parseAtc } from './parse';
import { checkAtcExpression } from './validate';

/** A compact rendering of a parsed expression, to compare trees in tables. */
function show(e: AtcExpression): string {
  if (e.kind === 'predicate') {
    let lhs = e.field;
    if (e.lower) lhs = `lower(${lhs})`;
    if (e.any) lhs = `any(${lhs})`;
    const v = e.value;
    const rhs = v.type === 'String' || v.type === 'Regex' ? JSON.stringify(v.value) : v.type === 'Int' ? String(v.value) : v.value.text;
    return `${lhs} ${e.op} ${rhs}`;
  }
  if (e.kind === 'not') return `!(${show(e.expr)})`;
  return `(${show(e.left)} ${e.kind === 'and' ? '&&' : '||'} ${show(e.right)})`;
}

const errorOf = (source: string, protocols = ['http']) => {
  const result = checkAtcExpression(source, protocols);
  return 'error' in result ? result.error : null;
};

describe('ATC parser (Kong/atc-router grammar)', () => {
  it.each([
    ['http.method == "GET"', 'http.method == "GET"'],
    ['http.path ^= "/a" && http.host == "x.test"', '(http.path ^= "/a" && http.host == "x.test")'],
    // as in the crate's Pratt parser, `||` binds tighter than `&&`
    ['a == 1 && b == 2 || c == 3', '(a == 1 && (b == 2 || c == 3))'],
    ['a == 1 || b == 2 && c == 3', '((a == 1 || b == 2) && c == 3)'],
    ['(a == 1 && b == 2) || c == 3', '((a == 1 && b == 2) || c == 3)'],
    ['!(http.method == "GET") && !(http.host == "example.com")', '(!(http.method == "GET") && !(http.host == "example.com"))'],
    ['lower(http.headers.x_foo) == "bar"', 'lower(http.headers.x_foo) == "bar"'],
    ['any(lower(http.queries.q)) contains "z"', 'any(lower(http.queries.q)) contains "z"'],
    ['http.path ~ r#"^/a/\\d+"#', 'http.path ~ "^/a/\\\\d+"'],
    ['http.path == "a\\"b\\n"', 'http.path == "a\\"b\\n"'],
    ['net.src.ip in 10.0.0.0/8', 'net.src.ip in 10.0.0.0/8'],
    ['net.src.ip not in fd00::/64', 'net.src.ip not in fd00::/64'],
    ['net.dst.ip == ::1', 'net.dst.ip == ::1'],
    ['net.src.port >= 0x10 && net.src.port < 010 && net.dst.port != -1', '((net.src.port >= 16 && net.src.port < 8) && net.dst.port != -1)'],
    ['  http.host\n ==\t"a"  ', 'http.host == "a"'],
  ])('%s', (source, tree) => {
    expect(show(parseAtc(source))).toBe(tree);
  });

  it('reports what was expected where, as the crate does', () => {
    expect(() => parseAtc('! a == 1')).toThrow(' --> 1:1\n  |\n1 | ! a == 1\n  | ^---\n  |\n  = expected term');
    expect(() => parseAtc('a == 1 || ! b == 2')).toThrow(' --> 1:11\n  |\n1 | a == 1 || ! b == 2\n  |           ^---\n  |\n  = expected term');
    expect(() => parseAtc('(a == 1 || b == 2) && ! c == 3')).toThrow(' --> 1:23\n  |\n1 | (a == 1 || b == 2) && ! c == 3\n  |                       ^---\n  |\n  = expected term');
    expect(() => parseAtc('(http.method == "GET") &&')).toThrow('= expected term');
    expect(() => parseAtc('http.method ==')).toThrow(' --> 1:15\n  |\n1 | http.method ==\n  |               ^---\n  |\n  = expected rhs');
    expect(() => parseAtc('http.method "GET"')).toThrow('= expected binary_operator');
    expect(() => parseAtc('http.method == "GET" http.host == "a"')).toThrow('= expected and_op, or_op, or EOI');
    expect(() => parseAtc('upper(http.host) == "a"')).toThrow('= unknown transformation function: upper');
    expect(() => parseAtc('http.path ~ 1')).toThrow('= regex operator can only be used with String operands');
  });

  it('refuses regexes the linear-time engine cannot run (decision 17)', () => {
    expect(() => parseAtc('http.path ~ "^/(a)\\\\1"')).toThrow(/-->/);
    expect(() => parseAtc('http.path ~ "/[abc/*/user$"')).toThrow(/-->/);
  });

  it('refuses malformed addresses and networks with host bits set', () => {
    expect(() => parseAtc('net.src.ip in 1.2.3.4/16')).toThrow('host part of address was not zero');
    expect(() => parseAtc('net.src.ip == 300.1.1.1')).toThrow('invalid IPv4 address syntax');
  });

  it('lists predicates and the clauses of the top-level &&', () => {
    const e = parseAtc('http.host == "a" && (http.path ^= "/x" || http.path ^= "/y") && http.method == "GET"');
    expect(predicatesOf(e).map((p) => p.field)).toEqual(['http.host', 'http.path', 'http.path', 'http.method']);
    expect(conjunctsOf(e).map(show)).toEqual(['http.host == "a"', '(http.path ^= "/x" || http.path ^= "/y")', 'http.method == "GET"']);
  });
});

describe('ATC semantic checks (Kong 3.9 fields, crate messages)', () => {
  it.each([
    ['http.method == "GET" && http.host == "example.com" && http.path == "/ovo"', ['http']],
    ['!(http.method == "GET") && !(http.host == "example.com") && !(http.path ^= "/foo")', ['http']],
    ['net.src.ip == 1.2.3.4 && net.src.port == 80', ['tcp']],
    ['http.method == "GET" && net.src.ip == 1.2.3.4 && net.src.port == 80', ['https']],
    ['http.method == "GET" && net.dst.ip == 1.2.3.4 && net.dst.port == 80', ['grpcs']],
    ['http.method == "GET" && net.port == 8000', ['grpc']],
    ['http.path.segments.0 == "foo"', ['grpcs']],
    ['http.path.segments.1 ^= "bar"', ['grpcs']],
    ['http.path.segments.20_30 ~ r#"x/y"#', ['grpcs']],
    ['http.path.segments.len == 10', ['grpcs']],
    ['tls.sni =^ ".example.com" && net.protocol == "tls"', ['tls_passthrough']],
    ['lower(http.headers.x_a) contains "b" && http.queries.page == "1"', ['http']],
  ])('accepts %s', (source, protocols) => {
    expect(checkAtcExpression(source, protocols)).not.toHaveProperty('error');
  });

  it.each([
    ['unkn == "abc"', ['http'], 'Unknown LHS field'],
    ['http.method == "GET" && net.src.ip == 1.2.3.4', ['tcp'], 'Unknown LHS field'],
    ['http.headers.a.b == "x"', ['http'], 'Unknown LHS field'],
    ['http.host == 1', ['http'], 'Type mismatch between the LHS and RHS values of predicate'],
    ['net.src.ip == "abc"', ['http'], 'Type mismatch between the LHS and RHS values of predicate'],
    ['net.src.ip == 192.168.0.0/24', ['http'], 'Type mismatch between the LHS and RHS values of predicate'],
    ['lower(net.src.port) == 1', ['http'], 'lower-case transformation function only supported with String type fields'],
    ['net.src.port ~ "1"', ['http'], 'Regex operators only supports string operands'],
    ['net.src.port ^= 1', ['http'], 'Prefix/Postfix operators only supports string operands'],
    ['http.queries.page > "1"', ['http'], 'Greater/GreaterOrEqual/Less/LessOrEqual operators only supports integer operands'],
    ['net.src.ip in 192.168.0.1', ['http'], 'In/NotIn operators only supports IP in CIDR'],
    ['http.host in 10.0.0.0/8', ['http'], 'In/NotIn operators only supports IP in CIDR'],
    ['net.src.port contains 1', ['http'], 'Contains operator only supports string operands'],
    ['http.path.segments.len == "10"', ['http'], 'Type mismatch between the LHS and RHS values of predicate'],
  ])('refuses %s', (source, protocols, message) => {
    expect(errorOf(source, protocols)).toBe(message);
  });

  it.each([
    'http.path.segments.len0   == 10',
    'http.path.segments.len_a  == 10',
    'http.path.segments.abc    == "foo"',
    'http.path.segments.a_c    == "foo"',
    'http.path.segments.1_2_3  == "foo"',
    'http.path.segments.1_     == "foo"',
    'http.path.segments._1     == "foo"',
    'http.path.segments.2_1    == "foo"',
    'http.path.segments.1_1    == "foo"',
    'http.path.segments.01_2   == "foo"',
    'http.path.segments.001_2  == "foo"',
    'http.path.segments.1_03   == "foo"',
  ])('refuses the segment field of %s', (source) => {
    const error = errorOf(source);
    expect(['illformed http.path.segments.* field', 'Type mismatch between the LHS and RHS values of predicate']).toContain(error);
  });

  it('refuses `http.path.segments.` (nothing after the dot)', () => {
    expect(errorOf('http.path.segments.       == "foo"')).toBe('illformed http.path.segments.* field');
  });
});
