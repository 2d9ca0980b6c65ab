/**
 * The syntax tree of Kong's ATC language (the `expression` of a route under `router_flavor = expressions`), as the
 * Kong/atc-router crate defines it: predicates `lhs op rhs` joined by `&&`, `||`, `!( … )` and parentheses.
 */

export type AtcType = 'String' | 'Int' | 'IpAddr' | 'IpCidr' | 'Regex';

export type AtcOperator = '==' | '!=' | '~' | '^=' | '=^' | '>=' | '>' | '<=' | '<' | 'in' | 'not in' | 'contains';

/** An IP address or network, as 16 bytes for v6 or 4 for v4, and its prefix length (32/128 for an address). */
export interface IpValue {
  bytes: Uint8Array;
  prefix: number;
  text: string;
}

export type AtcValue =
  | { type: 'String'; value: string }
  | { type: 'Int'; value: number }
  | { type: 'IpAddr'; value: IpValue }
  | { type: 'IpCidr'; value: IpValue }
  | { type: 'Regex'; value: string };

export interface AtcPredicate {
  kind: 'predicate';
  field: string;
  /** `lower(field)`: string values are lower-cased before the comparison */
  lower: boolean;
  /** `any(field)`: one of the field's values matching is enough (default: all of them must) */
  any: boolean;
  op: AtcOperator;
  value: AtcValue;
}

export type AtcExpression =
  | AtcPredicate
  | { kind: 'and'; left: AtcExpression; right: AtcExpression }
  | { kind: 'or'; left: AtcExpression; right: AtcExpression }
  | { kind: 'not'; expr: AtcExpression };

/** The predicates of an expression, left to right. */
export function predicatesOf(expr: AtcExpression, out: AtcPredicate[] = []): AtcPredicate[] {
  if (expr.kind === 'predicate') out.push(expr);
  else if (expr.kind === 'not') predicatesOf(expr.expr, out);
  else {
    predicatesOf(expr.left, out);
    predicatesOf(expr.right, out);
  }
  return out;
}

/** The clauses joined by `&&` at the top of an expression (the whole expression when it is not an `&&`). */
export function conjunctsOf(expr: AtcExpression, out: AtcExpression[] = []): AtcExpression[] {
  if (expr.kind === 'and') {
    conjunctsOf(expr.left, out);
    conjunctsOf(expr.right, out);
  } else out.push(expr);
  return out;
}
