import type { Request } from 'express';
import { Errors } from '@gatehouse/core';

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * One reading of a query-string flag (decision 30), wherever the admin API reads one (`dry_run`, `check_hash`,
 * `flatten_errors`, `balancer_health`): `true`, `1`, `yes`, `on` and `false`, `0`, `no`, `off` in any case; absent is
 * false, and a bare `?flag` (no value) is true, as a flag's presence says. Anything else, a flag given twice included,
 * is a 400 in Kong's shape naming the parameter.
 */
export function queryFlag(req: Request, name: string): boolean {
  const value = req.query[name];
  if (value === undefined) return false;
  if (typeof value === 'string') {
    if (value === '') return true;
    const word = value.toLowerCase();
    if (TRUE.has(word)) return true;
    if (FALSE.has(word)) return false;
  }
  const problem = 'expected a boolean: true, false, 1, 0, yes, no, on or off';
  throw Errors.invalidOptions(`${name}: ${problem}`, { [name]: problem });
}
