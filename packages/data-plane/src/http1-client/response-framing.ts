// What the upstream client reads from a response head besides its status: how its body is framed, how long the
// connection may be kept.

/** llhttp's answer to a head that it should stop after, as for an upgrade: `execute` then says where the head ended */
export const STOP_AFTER_HEAD = 2;

/**
 * The length of a final response's body when it is framed by Content-Length, else 0. llhttp has checked the value
 * (digits only, one value) and that no Transfer-Encoding comes with it; such a body is read by the connection itself
 * (llhttp is told to stop after the head), because llhttp's binding copies every body chunk into memory of its own,
 * an ArrayBuffer each that every young-generation collection then sweeps, and calls into JavaScript for it. Other
 * bodies (chunked, to the end of the connection, none) stay llhttp's.
 */
export function framedBodyLength(status: number, headers: readonly string[]): number {
  // no body whatever the head says: llhttp knows these
  if (status === 204 || status === 304) return 0;
  let length = 0;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === 14 && name.toLowerCase() === 'content-length') length = Number(headers[i + 1]);
    else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') return 0;
  }
  return length > 0 && Number.isSafeInteger(length) ? length : 0;
}

/** undici's margin under the time an upstream's `Keep-Alive: timeout=` names (ms), and its ceiling */
const KEEP_ALIVE_MARGIN = 2_000;
const KEEP_ALIVE_MAX = 600_000;
const KEEP_ALIVE_HINT = /timeout=(\d+)/;

/**
 * How long a kept-alive connection may be kept by the head's `Keep-Alive: timeout=N`, as undici reads it: N seconds
 * less two, at most ten minutes (≤ 0: not kept at all); null without such a hint.
 */
export function keepAliveHint(headers: readonly string[]): number | null {
  let ms: number | null = null;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.length !== 10 || headers[i]!.toLowerCase() !== 'keep-alive') continue;
    const hint = KEEP_ALIVE_HINT.exec(headers[i + 1]!);
    if (hint !== null) ms = Math.min(Number(hint[1]) * 1000 - KEEP_ALIVE_MARGIN, KEEP_ALIVE_MAX);
  }
  return ms;
}
