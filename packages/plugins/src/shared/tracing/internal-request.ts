import { nowMs, SpanKind, type RecordedSpan, type RequestSpans } from './request-spans';

/** The end of a `kong.internal.request` span: the answer's status, or null when the call failed before one came. */
export type InternalRequestEnd = (status: number | null) => void;

const NOTHING: InternalRequestEnd = () => {};

/**
 * Kong's `http_client` instrumentation: a `kong.internal.request` span (kind client, under the request span) around an
 * HTTP call a plugin makes while it serves a request. Kong records `resty.http`'s `request_uri`: azure-functions' call
 * and the AI transformers' model calls (aws-lambda goes through lua-resty-aws's own client, which Kong does not
 * record). Kong's attributes: `http.url` (the whole URL), `http.method`, `http.flavor`, `http.user_agent` (the
 * User-Agent sent, when there is one) and, once answered, `http.status_code`. Without that instrumentation (or without
 * tracing) nothing is recorded and the returned end does nothing.
 */
export function startInternalRequest(spans: RequestSpans | null | undefined, url: string | URL, method: string, headers: Readonly<Record<string, string>>): InternalRequestEnd {
  if (spans == null || !spans.has('http_client')) return NOTHING;
  const attributes: RecordedSpan['attributes'] = { 'http.url': String(url), 'http.method': method, 'http.flavor': '1.1' };
  const userAgent = userAgentOf(headers);
  if (userAgent !== undefined) attributes['http.user_agent'] = userAgent;
  const span = spans.start('kong.internal.request', SpanKind.CLIENT, attributes);
  return (status) => {
    if (status !== null) span.attributes['http.status_code'] = status;
    span.endMs = nowMs();
  };
}

function userAgentOf(headers: Readonly<Record<string, string>>): string | undefined {
  for (const name in headers) if (name.length === 10 && name.toLowerCase() === 'user-agent') return headers[name];
  return undefined;
}
