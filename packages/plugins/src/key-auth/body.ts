// Reading and rewriting one field of a request body, for key_in_body: form-urlencoded, JSON and multipart.

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

function boundaryOf(contentType: string): string | null {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]!.trim()) : null;
}

interface MultipartPart {
  name: string | null;
  filename: boolean;
  value: Buffer;
  /** byte range of the whole part, delimiter included, so it can be cut out */
  start: number;
  end: number;
}

/** Splits a multipart body into its parts; null when the body is not well formed. */
function multipartParts(body: Buffer, boundary: string): MultipartPart[] | null {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let pos = body.indexOf(delimiter);
  if (pos < 0) return null;
  for (;;) {
    const afterDelimiter = pos + delimiter.length;
    if (body[afterDelimiter] === 0x2d && body[afterDelimiter + 1] === 0x2d) return parts; // closing "--"
    const headersStart = body.indexOf('\r\n', afterDelimiter);
    if (headersStart < 0) return null;
    const headersEnd = body.indexOf('\r\n\r\n', headersStart);
    if (headersEnd < 0) return null;
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), headersEnd);
    if (next < 0) return null;
    const headerText = body.subarray(headersStart + 2, headersEnd).toString('latin1');
    const disposition = /content-disposition:[^\r\n]*/i.exec(headerText)?.[0] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? null;
    parts.push({ name, filename: /\bfilename=/i.test(disposition), value: body.subarray(headersEnd + 4, next), start: pos, end: next + 2 });
    pos = next + 2;
  }
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
