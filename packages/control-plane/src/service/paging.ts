import { Errors } from '@gatehouse/core';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export interface ListQuery {
  size: number;
  /** position to continue after (decoded offset) */
  after?: unknown[];
  tagsAll?: string[];
  tagsAny?: string[];
  /** the raw args `next` carries over */
  sizeArg?: string;
  tagsArg?: string;
}

type QueryValue = string | string[] | undefined | unknown;

function single(value: QueryValue): string | undefined {
  if (Array.isArray(value)) return value.length ? String(value[value.length - 1]) : undefined;
  return value === undefined || value === null ? undefined : String(value);
}

/** Opaque offsets: base64 of a JSON array holding the sort key of the last item served. */
export function encodeOffset(position: unknown[]): string {
  return Buffer.from(JSON.stringify(position)).toString('base64');
}

export function decodeOffset(offset: string, arity = 1): unknown[] {
  const normalized = offset.replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(normalized)) throw Errors.invalidOffset(offset);
  try {
    const decoded = JSON.parse(Buffer.from(normalized, 'base64').toString('utf8'));
    if (Array.isArray(decoded) && decoded.length === arity && decoded.every((v) => typeof v === 'string')) return decoded;
  } catch {}
  throw Errors.invalidOffset(offset);
}

/** `?tags=a,b` means all of them, `?tags=a/b` any of them; mixing both is refused (Kong 1.1+). */
function parseTags(raw: string): Pick<ListQuery, 'tagsAll' | 'tagsAny'> {
  if (raw === '') throw Errors.invalidOptions('tags: cannot be null', { tags: 'cannot be null' });
  const hasAnd = raw.includes(',');
  const hasOr = raw.includes('/');
  if (hasAnd && hasOr) throw Errors.invalidOptions('tags: invalid filter syntax', { tags: 'invalid filter syntax' });
  const parts = raw.split(hasOr ? '/' : ',');
  if (parts.some((p) => p === '')) throw Errors.invalidOptions('tags: invalid filter syntax', { tags: 'invalid filter syntax' });
  return hasOr ? { tagsAny: parts } : { tagsAll: parts };
}

export function parseListQuery(query: Record<string, QueryValue>, offsetArity = 1): ListQuery {
  const sizeArg = single(query.size);
  let size = DEFAULT_PAGE_SIZE;
  if (sizeArg !== undefined) {
    if (!/^\d+$/.test(sizeArg)) throw Errors.invalidSize();
    size = Number(sizeArg);
    if (size < 1 || size > MAX_PAGE_SIZE) throw Errors.invalidSize();
  }
  const offset = single(query.offset);
  const after = offset !== undefined && offset !== '' ? decodeOffset(offset, offsetArity) : undefined;
  const tagsArg = Array.isArray(query.tags) ? query.tags.map(String).join(',') : single(query.tags);
  const tags = tagsArg !== undefined ? parseTags(tagsArg) : {};
  return { size, after, ...tags, sizeArg, tagsArg };
}

/** Kong's `next`: the same path with the offset, and the size and tags args when they were given. */
export function nextLink(path: string, offset: string | null, q: ListQuery): string | null {
  if (offset === null) return null;
  let link = `${path}?offset=${encodeURIComponent(offset)}`;
  if (q.sizeArg !== undefined) link += `&size=${encodeURIComponent(q.sizeArg)}`;
  if (q.tagsArg !== undefined) link += `&tags=${encodeURIComponent(q.tagsArg)}`;
  return link;
}
