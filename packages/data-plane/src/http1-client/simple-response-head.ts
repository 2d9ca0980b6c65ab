import { CHAR_CLASS, CR, HTAB, LF, plainLines, SP, VISIBLE } from '../plain-head/lines';

/**
 * The upstream client's narrow path for the commonest response: a whole `HTTP/1.1` head in one read, a final status
 * with a body framed by Content-Length, plain header lines. Such a head is read here, in JavaScript: no call into
 * llhttp's binding, no call back out of it per event, no parser to reset.
 *
 * What it takes is a strict subset of what llhttp (strict mode) takes, read to the same result: anything else, or
 * anything it is unsure of, is null, and the response goes to llhttp as before. Null, besides what `plainLines`
 * leaves to llhttp, for:
 * - a head not whole within the first `MAX_HEAD` bytes of the read, or another version than 1.1;
 * - a status outside 200–599, or 204 or 304 (no body whatever the head says: llhttp knows these);
 * - a control character in the reason phrase, or no space after the status;
 * - no Content-Length (a body to the end of the connection).
 */
export interface SimpleResponseHead {
  status: number;
  /** name, value, name, value, … as llhttp's binding hands them over */
  headers: string[];
  /** the connection may carry the next exchange (HTTP/1.1 without `Connection: close`) */
  keepAlive: boolean;
  /** the offset of the body's first byte in the read */
  bodyStart: number;
  /** the body's length, from Content-Length */
  bodyLength: number;
}

/** the most of a read looked at for a head: a head longer than this goes to llhttp */
export const MAX_HEAD = 4096;

/** The head at the start of `buffer[0, read)` when the narrow path takes it (see above), else null. */
export function simpleResponseHead(buffer: Buffer, read: number): SimpleResponseHead | null {
  const limit = read < MAX_HEAD ? read : MAX_HEAD;
  // `HTTP/1.1 `
  if (limit < 16 || buffer[0] !== 0x48 || buffer[1] !== 0x54 || buffer[2] !== 0x54 || buffer[3] !== 0x50 || buffer[4] !== 0x2f) return null;
  if (buffer[5] !== 0x31 || buffer[6] !== 0x2e || buffer[7] !== 0x31 || buffer[8] !== SP) return null;
  const status = digit(buffer[9]!) * 100 + digit(buffer[10]!) * 10 + digit(buffer[11]!);
  if (status < 200 || status > 599 || status === 204 || status === 304 || buffer[12] !== SP) return null;
  // the reason phrase: any field-value character, tab and space
  let at = 13;
  for (let c = buffer[at]!; c !== CR; c = buffer[++at]!) if (at >= limit || (c !== SP && c !== HTAB && (CHAR_CLASS[c]! & VISIBLE) === 0)) return null;
  if (at + 1 >= limit || buffer[at + 1] !== LF) return null;
  const lines = plainLines(buffer, at + 2, limit);
  if (lines === null || lines.contentLength < 0) return null;
  return { status, headers: lines.headers, keepAlive: lines.keepAlive, bodyStart: lines.end, bodyLength: lines.contentLength };
}

/** a decimal digit's value, or a large number that puts the status out of range */
const digit = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : 1000);
