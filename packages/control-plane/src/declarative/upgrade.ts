import { z } from 'zod';
import type { EntityKind } from '../service/entity-kind';

/** Keys Kong's declarative schema allows on every entity and ignores (notes for people, parked data). */
const IGNORED_ENTITY_KEYS = ['_comment', '_ignore'] as const;

/** an entity without `_comment` / `_ignore` (the same object when it has neither) */
export function withoutIgnoredKeys(body: Record<string, unknown>): Record<string, unknown> {
  if (!IGNORED_ENTITY_KEYS.some((key) => key in body)) return body;
  const out = { ...body };
  for (const key of IGNORED_ENTITY_KEYS) delete out[key];
  return out;
}

/** whether the field's schema is a reference record `{id}` (a service's `client_certificate`) */
function isIdRecord(schema: z.ZodType | undefined): boolean {
  let inner: unknown = schema;
  while (inner instanceof z.ZodNullable || inner instanceof z.ZodOptional || inner instanceof z.ZodDefault) inner = inner.unwrap();
  return inner instanceof z.ZodObject && Object.keys(inner.shape).length === 1 && 'id' in inner.shape;
}

const idFieldsCache = new WeakMap<EntityKind, string[]>();

/** the fields of a kind whose value is a reference record `{id}` but which are no foreign key the document resolves */
function idRecordFields(kind: EntityKind): string[] {
  let fields = idFieldsCache.get(kind);
  if (!fields) {
    const foreign = new Set(kind.def.foreignKeys.map((fk) => fk.field));
    const shape = kind.def.schema.shape as Record<string, z.ZodType>;
    fields = Object.keys(shape).filter((field) => !foreign.has(field) && isIdRecord(shape[field]));
    idFieldsCache.set(kind, fields);
  }
  return fields;
}

/** a reference given as a plain id (`client_certificate: <uuid>`), as Kong's documents may give one, as `{id}` */
export function withIdRecords(kind: EntityKind, body: Record<string, unknown>): Record<string, unknown> {
  let out = body;
  for (const field of idRecordFields(kind)) {
    if (typeof body[field] !== 'string') continue;
    if (out === body) out = { ...body };
    out[field] = { id: body[field] };
  }
  return out;
}

const NOT_REGEX = /^[a-zA-Z0-9.\-_~/%]*$/;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** percent-encoded characters that stay encoded in a regex path (Kong's reserved set), uppercased */
const RESERVED_CODES = new Set([0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2f, 0x3a, 0x3b, 0x3d, 0x3f, 0x40, 0x5b, 0x5d]);
/** regex meta characters a percent-encoded one decodes to, escaped */
const REGEX_META: Record<number, string> = { 0x2e: '\\.', 0x5e: '\\^', 0x2d: '\\-', 0x7b: '\\{', 0x7d: '\\}', 0x5c: '\\\\', 0x7c: '\\|' };

/**
 * One route path of a format 1.1 / 2.1 document as Kong 3.0 reads it (Kong's migrate_path_280_300): a path that is
 * not a plain prefix is a regex, and gets the `~` 3.0 requires (without it the route would match as a prefix,
 * silently taking other requests); percent-encoded characters are decoded once, as 3.0 no longer does.
 */
export function upgradePath(path: string): string {
  if (NOT_REGEX.test(path)) {
    return path.replace(/%([0-9a-fA-F]{2})/g, (m: string, hex: string) => {
      const ch = String.fromCharCode(parseInt(hex, 16));
      return UNRESERVED.test(ch) ? ch : m.toUpperCase();
    });
  }
  const decoded = path.replace(/%([0-9a-fA-F]{2})/g, (m: string, hex: string) => {
    const code = parseInt(hex, 16);
    if (RESERVED_CODES.has(code)) return m.toUpperCase();
    return REGEX_META[code] ?? String.fromCharCode(code);
  });
  return `~${decoded}`;
}

function upgradeRoutes(routes: unknown): void {
  if (!Array.isArray(routes)) return;
  for (const route of routes) {
    if (!route || typeof route !== 'object' || !Array.isArray((route as Record<string, unknown>).paths)) continue;
    const r = route as { paths: unknown[] };
    r.paths = r.paths.map((p) => (typeof p === 'string' ? upgradePath(p) : p));
  }
}

/**
 * A document of an earlier format (1.1, 2.1) brought to 3.0 as Kong's declarative migrations do: the route paths of
 * top-level routes and of routes nested in services. The document is changed in place.
 */
export function upgradeDocument(doc: Record<string, unknown>): void {
  const version = doc._format_version;
  if (version !== '1.1' && version !== '2.1') return;
  upgradeRoutes(doc.routes);
  if (Array.isArray(doc.services)) for (const service of doc.services) if (service && typeof service === 'object') upgradeRoutes((service as Record<string, unknown>).routes);
  doc._format_version = '3.0';
}
