/**
 * A request target no route may see (decision 32): a raw `\` (some upstreams read it as `/`), a control character or
 * a space, anywhere in the path or the query. `%5C` is an escape like any other (decision 12 keeps it encoded).
 * Node's HTTP/1.1 parser already refuses control characters and spaces; HTTP/2 `:path` values with them are refused
 * by nghttp2 (RST_STREAM PROTOCOL_ERROR, RFC 9113 §8.3.1). The check stays here for both, before anything reads the
 * target.
 */
export function isForbiddenTarget(target: string): boolean {
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    // control characters and space (0x00-0x20), DEL, `\`
    if (c <= 0x20 || c === 0x7f || c === 0x5c) return true;
  }
  return false;
}
