import { DbError, ErrorCode, luaTable, type FieldErrors } from '@gatehouse/core';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export function invalidPrimaryKey(value: string): DbError {
  return new DbError(ErrorCode.INVALID_PRIMARY_KEY, `invalid primary key: '${luaTable({ id: value })}'`, { id: 'expected a valid UUID' });
}

export function foreignKeysUnresolved(field: string, given: Record<string, unknown>, parent: string): DbError {
  const reason = `the foreign key cannot be resolved with '${luaTable(given)}' for an existing '${parent}' entity`;
  return new DbError(ErrorCode.FOREIGN_KEYS_UNRESOLVED, `foreign keys unresolved (${field}: ${reason})`, { [field]: reason } as FieldErrors);
}
