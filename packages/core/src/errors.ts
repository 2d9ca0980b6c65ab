/**
 * One registry of admin/database errors, Kong's numbering (kong/db/errors.lua) and the HTTP status each maps to.
 * Proxy-side errors are plain `{message}` bodies and live with the code that raises them.
 */
export const ErrorCode = {
  INVALID_PRIMARY_KEY: 1,
  SCHEMA_VIOLATION: 2,
  PRIMARY_KEY_VIOLATION: 3,
  FOREIGN_KEY_VIOLATION: 4,
  UNIQUE_VIOLATION: 5,
  NOT_FOUND: 6,
  INVALID_OFFSET: 7,
  DATABASE_ERROR: 8,
  INVALID_SIZE: 9,
  INVALID_UNIQUE: 10,
  INVALID_OPTIONS: 11,
  OPERATION_UNSUPPORTED: 12,
  FOREIGN_KEYS_UNRESOLVED: 13,
  DECLARATIVE_CONFIG: 14,
  REFERENCED_BY_OTHERS: 19,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const REGISTRY: Record<ErrorCode, { name: string; status: number }> = {
  1: { name: 'invalid primary key', status: 400 },
  2: { name: 'schema violation', status: 400 },
  3: { name: 'primary key violation', status: 400 },
  4: { name: 'foreign key violation', status: 400 },
  5: { name: 'unique constraint violation', status: 409 },
  6: { name: 'not found', status: 404 },
  7: { name: 'invalid offset', status: 400 },
  8: { name: 'database error', status: 500 },
  9: { name: 'invalid size', status: 400 },
  10: { name: 'invalid unique', status: 400 },
  11: { name: 'invalid options', status: 400 },
  12: { name: 'operation unsupported', status: 405 },
  13: { name: 'foreign keys unresolved', status: 400 },
  14: { name: 'invalid declarative configuration', status: 400 },
  19: { name: 'referenced by others', status: 400 },
};

/** Per-field messages; nested records nest (fields.config.key_names), entity-level checks sit under "@entity". */
export type FieldErrors = { [field: string]: string | string[] | FieldErrors };

export interface KongErrorBody {
  code: ErrorCode;
  name: string;
  message: string;
  fields?: FieldErrors;
}

/** An error with a Kong error body: `{code, name, message, fields}`. */
export class DbError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields: FieldErrors;
  readonly errorName: string;

  constructor(code: ErrorCode, message: string, fields: FieldErrors = {}) {
    super(message);
    this.code = code;
    this.errorName = REGISTRY[code].name;
    this.status = REGISTRY[code].status;
    this.fields = fields;
  }

  toBody(): KongErrorBody {
    return { code: this.code, name: this.errorName, message: this.message, fields: this.fields };
  }
}

/** An error answered with a bare `{message}` body (404 Not found, 405, 415, 400 Cannot parse JSON body, 401/403). */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Record<string, unknown> | null;

  constructor(status: number, message: string, opts: { headers?: Record<string, string>; body?: Record<string, unknown> | null } = {}) {
    super(message);
    this.status = status;
    this.headers = opts.headers ?? {};
    this.body = opts.body === undefined ? { message } : opts.body;
  }
}

/** Flattens nested field errors into "a.b: msg" parts, in field order, for the one-line message. */
export function flattenFieldErrors(fields: FieldErrors, prefix = ''): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (key === '@entity') {
      const list = Array.isArray(value) ? value : [String(value)];
      for (const msg of list) out.push(String(msg));
      continue;
    }
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') out.push(`${path}: ${value}`);
    else if (Array.isArray(value)) for (const msg of value) out.push(`${path}: ${msg}`);
    else out.push(...flattenFieldErrors(value, path));
  }
  return out;
}

/** Builds Kong's schema violation: "schema violation (f: msg)" or "N schema violations (a; b)". */
export function schemaViolation(fields: FieldErrors): DbError {
  const parts = flattenFieldErrors(fields);
  const message = parts.length === 1 ? `schema violation (${parts[0]})` : `${parts.length} schema violations (${parts.join('; ')})`;
  return new DbError(ErrorCode.SCHEMA_VIOLATION, message, fields);
}

export const Errors = {
  notFound: () => new HttpError(404, 'Not found'),
  methodNotAllowed: () => new HttpError(405, 'Method not allowed'),
  unsupportedMediaType: () => new HttpError(415, 'Unsupported Media Type', { body: null }),
  badJson: () => new HttpError(400, 'Cannot parse JSON body'),
  unique: (fields: Record<string, unknown>) =>
    new DbError(ErrorCode.UNIQUE_VIOLATION, `UNIQUE violation detected on '${luaTable(fields)}'`, fields as FieldErrors),
  foreignKey: (field: string, id: unknown, entity: string) =>
    new DbError(
      ErrorCode.FOREIGN_KEY_VIOLATION,
      `the foreign key '${luaTable({ id })}' does not reference an existing '${entity}' entity.`,
      { [field]: `the foreign key '${luaTable({ id })}' does not reference an existing '${entity}' entity.` },
    ),
  referencedBy: (child: string, parent: string) =>
    new DbError(ErrorCode.FOREIGN_KEY_VIOLATION, `an existing '${child}' entity references this '${parent}' entity`, {
      '@referenced_by': child,
    }),
  invalidSize: () => new DbError(ErrorCode.INVALID_SIZE, 'size must be an integer between 1 and 1000'),
  invalidOffset: (offset: string) => new DbError(ErrorCode.INVALID_OFFSET, `'${offset}' is not a valid offset: bad base64 encoding`),
  invalidOptions: (message: string, fields: FieldErrors = {}) => new DbError(ErrorCode.INVALID_OPTIONS, `invalid option (${message})`, fields),
  primaryKey: (key: Record<string, unknown>) =>
    new DbError(ErrorCode.PRIMARY_KEY_VIOLATION, `primary key violation on key '${luaTable(key)}'`, key as FieldErrors),
  /** a 404 that names what was looked for (`No RBAC user by name or id x`, `Workspace 'x' not found`) */
  notFoundNamed: (message: string) => new HttpError(404, message),
  /** a request Kong refuses with a bare message rather than a schema violation */
  badRequest: (message: string) => new HttpError(400, message),
  /** RBAC: no valid `Kong-Admin-Token` */
  invalidCredentials: () => new HttpError(401, 'Invalid RBAC credentials'),
  /** RBAC: the caller may not do this (the message says who and what) */
  forbidden: (message: string) => new HttpError(403, message),
};

/** Renders a value the way Kong prints tables in messages: {a="x",b=null}, keys sorted. */
export function luaTable(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return `"${value}"`;
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `{${value.map(luaTable).join(',')}}`;
  const entries = Object.keys(value as object)
    .sort()
    .map((k) => `${k}=${luaTable((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}
