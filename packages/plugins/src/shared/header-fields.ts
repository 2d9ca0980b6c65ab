import { z } from 'zod';
import { colonPair, splitPair } from './colon-pairs';

/**
 * Headers about the connection or the framing of the message (decision 32): a plugin's config may not set them, on
 * the upstream request or on the client's response, since the gateway frames both messages itself and a wrong value
 * breaks the exchange (a request-transformer adding `Transfer-Encoding` made every request fail with 502).
 */
const FRAMING_HEADERS = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length']);

/** `Connection`, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade` or `Content-Length`, in any case. */
export function isFramingHeader(name: string): boolean {
  const lower = name.trim().toLowerCase();
  return FRAMING_HEADERS.has(lower) || lower.startsWith('proxy-');
}

export function framingHeaderMessage(name: string): string {
  return `'${name.trim()}' is a hop-by-hop or framing header: a plugin may not set it`;
}

/** A header name a plugin sets. */
export const settableHeaderName = () => z.string().refine((name) => !isFramingHeader(name), { error: (issue) => framingHeaderMessage(String(issue.input)) });

/** `name:value` elements whose name (`pick` 0) or, for a rename `old:new`, new name (`pick` 1) is a header a plugin sets. */
function settablePairs(pick: 0 | 1) {
  const nameOf = (entry: unknown) => splitPair(String(entry))[pick];
  return z.array(colonPair().refine((entry) => !isFramingHeader(nameOf(entry)), { error: (issue) => framingHeaderMessage(nameOf(issue.input)) })).default([]);
}

/** `name:value` headers to add, append or replace. */
export const settableHeaderPairs = () => settablePairs(0);

/** `old:new` header renames: the new name is set. */
export const settableHeaderRenames = () => settablePairs(1);
