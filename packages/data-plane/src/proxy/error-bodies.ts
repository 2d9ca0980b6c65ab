/**
 * The body of an error the gateway makes itself, chosen as Kong chooses it: by the request's `Accept` (the media type
 * with the highest quality, the first on ties; `*` / `application/*` → JSON, `text/*` → plain text; an unknown type
 * → JSON), or, without `Accept`, by Kong's `error_default_type` (GATEHOUSE_ERROR_DEFAULT_TYPE). HTML, XML and plain
 * text use Kong's templates with the request id; JSON keeps the gateway's `{"message": …}` body.
 */
export type ErrorBodyType = 'application/json' | 'text/html' | 'application/xml' | 'text/plain';

export const ERROR_BODY_TYPES: readonly ErrorBodyType[] = ['application/json', 'text/html', 'application/xml', 'text/plain'];

const BY_MEDIA_TYPE: Record<string, ErrorBodyType> = {
  'application/json': 'application/json',
  'text/html': 'text/html',
  'application/xml': 'application/xml',
  'text/plain': 'text/plain',
  'application/*': 'application/json',
  'text/*': 'text/plain',
  '*/*': 'application/json',
};

const ENTRY = /^\s*([a-z0-9][a-z0-9!#$&^_+.-]*|\*)\/([a-z0-9][a-z0-9!#$&^_+.-]*|\*)\s*((?:;[^,]*)?)$/i;

/** The error body type for an `Accept` header (Kong's get_response_type), or `fallback` when there is none. */
export function errorBodyType(accept: string | undefined, fallback: ErrorBodyType): ErrorBodyType {
  if (accept === undefined || accept.trim() === '') return fallback;
  let chosen: ErrorBodyType = 'application/json';
  let best = 0;
  for (const entry of accept.split(',')) {
    const m = ENTRY.exec(entry);
    if (!m) continue;
    const q = /;\s*q\s*=\s*([01](?:\.\d{0,3})?)/i.exec(m[3] ?? '');
    const quality = q ? Number(q[1]) : 1;
    if (quality > best) {
      best = quality;
      chosen = BY_MEDIA_TYPE[`${m[1]!.toLowerCase()}/${m[2]!.toLowerCase()}`] ?? 'application/json';
    }
  }
  return chosen;
}

/** Kong's template of the type, or null for JSON (the caller's own body stays). */
export function errorBody(type: ErrorBodyType, message: string, requestId: string): string | null {
  switch (type) {
    case 'text/html':
      return `<!doctype html>\n<html>\n  <head>\n    <meta charset="utf-8">\n    <title>Error</title>\n  </head>\n  <body>\n    <h1>Error</h1>\n    <p>${escapeMarkup(message)}.</p>\n    <p>request_id: ${requestId}</p>\n  </body>\n</html>\n`;
    case 'application/xml':
      return `<?xml version="1.0" encoding="UTF-8"?>\n<error>\n  <message>${escapeMarkup(message)}</message>\n  <requestid>${requestId}</requestid>\n</error>\n`;
    case 'text/plain':
      return `${message}\nrequest_id: ${requestId}\n`;
    default:
      return null;
  }
}

function escapeMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * GATEHOUSE_ERROR_DEFAULT_TYPE: one of the four types. Unset → JSON, as the gateway answered before the setting
 * existed (Kong's own default is `text/plain`; a kong.conf or KONG_ERROR_DEFAULT_TYPE brings it).
 */
export function parseErrorDefaultType(value: string | undefined): ErrorBodyType {
  if (value === undefined || value.trim() === '') return 'application/json';
  const type = ERROR_BODY_TYPES.find((t) => t === value.trim().toLowerCase());
  if (!type) throw new Error(`GATEHOUSE_ERROR_DEFAULT_TYPE must be one of ${ERROR_BODY_TYPES.join(', ')}, got '${value}'`);
  return type;
}
