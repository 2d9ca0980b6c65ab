import { describe, expect, it } from '@jest/globals';
import { isDatabaseUnreachable } from './unreachable';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnreachable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET', 'read ECONNRESET')],
    ['an administrator shutdown (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['a server starting or stopping (57P03)', withCode('57P03', 'the database system is shutting down')],
    ['a connection exception (08006)', withCode('08006', 'connection failure')],
    ['a connection cut mid-query', new Error('Connection terminated unexpectedly')],
    ['a pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['a client that lost its connection', new Error('Client has encountered a connection error and is not queryable')],
    ['every address refused (AggregateError)', Object.assign(new AggregateError([withCode('ECONNREFUSED')], ''), { code: undefined })],
    ['a cause that was unreachable', new Error('wrapped', { cause: withCode('ECONNREFUSED') })],
  ])('%s: unreachable', (_what, err) => {
    expect(isDatabaseUnreachable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error', withCode('42601', 'syntax error at or near')],
    ['a missing table', withCode('42P01', 'relation "x" does not exist')],
    ['a plain error', new Error('something else')],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', null],
  ])('%s: not unreachable', (_what, err) => {
    expect(isDatabaseUnreachable(err)).toBe(false);
  });
});
