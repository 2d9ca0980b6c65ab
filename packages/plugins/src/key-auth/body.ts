// Reading and rewriting one field of a request body, for key_in_body: form-urlencoded, JSON and multipart.
import { boundaryOf, multipartParts } from '../shared/multipart';

/** What a body field holds: one value, several values (a duplicate), or nothing usable. */
export type BodyField = { kind: 'one'; value: string } | { kind: 'many' } | { kind: 'none' };

const NONE: BodyField = { kind: 'none' };
const MANY: BodyField = { kind: 'many' };

type BodyKind = 'form' | 'json' | 'multipart' | null;

function kindOf(contentType: string | undefined): BodyKind {
  if (!contentType) return null;
  const type = contentType.toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) return 'form';
  if (type.startsWith('application/json') || /^application\/[^;]*\+json/.test(type)) return 'json';
  if (type.startsWith('multipart/form-data')) return 'multipart';
  return null;
}

/** Finds field `name` in the body; a repeated field or a JSON array is a duplicate. Unparsable bodies hold nothing. */
export function readBodyField(body: Buffer, contentType: string | undefined, name: string): BodyField {
  switch (kindOf(contentType)) {
    case 'form': {
      const values = new URLSearchParams(body.toString('utf8')).getAll(name);
      if (values.length > 1) return MANY;
      return values.length === 1 ? { kind: 'one', value: values[0]! } : NONE;
    }
    case 'json': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return NONE;
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return NONE;
      const value = (parsed as Record<string, unknown>)[name];
      if (typeof value === 'string') return { kind: 'one', value };
      if (Array.isArray(value)) return MANY;
      return NONE;
    }
    case 'multipart': {
      const boundary = boundaryOf(contentType!);
      const parts = boundary ? multipartParts(body, boundary) : null;
      if (!parts) return NONE;
      const found = parts.filter((p) => p.name === name && !p.filename);
      if (found.length > 1) return MANY;
      return found.length === 1 ? { kind: 'one', value: found[0]!.value.toString('utf8') } : NONE;
    }
    default:
      return NONE;
  }
}

/** The body without field `name`, in the same encoding; null when the body cannot be rewritten. */
export function removeBodyField(body: Buffer, contentType: string | undefined, name: string): Buffer | null {
  switch (kindOf(contentType)) {
    case 'form': {
      const params = new URLSearchParams(body.toString('utf8'));
      params.delete(name);
      return Buffer.from(params.toString());
    }
    case 'json': {
      try {
        const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        delete parsed[name];
        return Buffer.from(JSON.stringify(parsed));
      } catch {
        return null;
      }
    }
    case 'multipart': {
      const boundary = boundaryOf(contentType!);
      const parts = boundary ? multipartParts(body, boundary) : null;
      if (!parts) return null;
      const kept: Buffer[] = [];
      let from = 0;
      for (const part of parts) {
        if (part.name !== name || part.filename) continue;
        kept.push(body.subarray(from, part.start));
        from = part.end;
      }
      kept.push(body.subarray(from));
      return Buffer.concat(kept);
    }
    default:
      return null;
  }
}
