/**
 * The header lines of an HTTP/1.1 head as the narrow paths read them (the upstream client's for responses, the front
 * lane's for requests): a strict subset of what llhttp (strict mode) takes, read to the same result. Anything outside
 * it is null, and the head goes to llhttp as before. Null for:
 * - a name that is not a token, a control character in a value, a bare CR or LF, a line folded onto the one before
 *   (obs-fold), white space before the colon or after the value, more than `MAX_LINES` lines;
 * - Transfer-Encoding, Upgrade, a Connection other than `keep-alive` or `close`, more than one Content-Length, or one
 *   that is empty, not digits or longer than 15 digits.
 * The bytes are checked where they lie (a loop over a buffer's bytes costs a third of one over a string's characters);
 * the names and values are then cut from one string of the whole head.
 */
export interface PlainLines {
  /** name, value, name, value, … as llhttp's binding hands them over (names as sent, values without leading space) */
  headers: string[];
  /** no `Connection: close` (the head is HTTP/1.1: kept alive unless it says so) */
  keepAlive: boolean;
  /** the Content-Length, or -1 without one */
  contentLength: number;
  /** the offset after the blank line that ends the head */
  end: number;
  /** the head's text up to the blank line (its start line included), one character a byte */
  text: string;
}

/** header lines a narrow path reads; a head with more goes to llhttp */
export const MAX_LINES = 64;
const MAX_LENGTH_DIGITS = 15;

/** 1: a token character (RFC 9110 §5.6.2), 2: a field-value character other than SP and HTAB */
export const CHAR_CLASS = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") CHAR_CLASS[c.charCodeAt(0)] = 1;
for (let c = 0x21; c <= 0x7e; c++) CHAR_CLASS[c] |= 2;
for (let c = 0x80; c <= 0xff; c++) CHAR_CLASS[c] = 2;
const TOKEN = 1;
export const VISIBLE = 2;

export const SP = 0x20;
export const HTAB = 0x09;
export const CR = 0x0d;
export const LF = 0x0a;
const COLON = 0x3a;

interface Latin1Slicer {
  latin1Slice(start: number, end: number): string;
}

/** where each line's parts lie: [name start, colon, value start, value end], reused by every head (reading is synchronous) */
const MARKS = new Int32Array(MAX_LINES * 4);

/**
 * The header lines from `at` (just after the start line) to the blank line, within `buffer[0, limit)`; null when the
 * head does not end within it or holds anything the narrow paths leave to llhttp (see above).
 */
export function plainLines(buffer: Buffer, at: number, limit: number): PlainLines | null {
  const marks = MARKS;
  let count = 0;
  while (true) {
    if (at + 1 >= limit) return null;
    let c = buffer[at]!;
    if (c === CR) {
      if (buffer[at + 1] !== LF) return null;
      break;
    }
    const nameStart = at;
    while (c !== COLON) {
      if ((CHAR_CLASS[c]! & TOKEN) === 0 || at >= limit) return null;
      c = buffer[++at]!;
    }
    if (at >= limit || at === nameStart || count === MAX_LINES) return null;
    const colon = at;
    c = buffer[++at]!;
    while (c === SP || c === HTAB) c = buffer[++at]!;
    const valueStart = at;
    while (c !== CR) {
      if (at >= limit || (c !== SP && c !== HTAB && (CHAR_CLASS[c]! & VISIBLE) === 0)) return null;
      c = buffer[++at]!;
    }
    if (at > valueStart && (buffer[at - 1] === SP || buffer[at - 1] === HTAB)) return null;
    if (at + 1 >= limit || buffer[at + 1] !== LF) return null;
    const mark = count * 4;
    marks[mark] = nameStart;
    marks[mark + 1] = colon;
    marks[mark + 2] = valueStart;
    marks[mark + 3] = at;
    count++;
    at += 2;
  }
  const text = (buffer as Buffer & Latin1Slicer).latin1Slice(0, at);
  const headers: string[] = new Array(count * 2);
  let keepAlive = true;
  let contentLength = -1;
  for (let i = 0; i < count; i++) {
    const mark = i * 4;
    const name = text.slice(marks[mark], marks[mark + 1]);
    const value = text.slice(marks[mark + 2], marks[mark + 3]);
    headers[i * 2] = name;
    headers[i * 2 + 1] = value;
    switch (name.length) {
      case 14:
        if (name.toLowerCase() !== 'content-length') break;
        if (contentLength >= 0 || value.length === 0 || value.length > MAX_LENGTH_DIGITS || !allDigits(value)) return null;
        contentLength = Number(value);
        break;
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') return null;
        break;
      case 7:
        if (name.toLowerCase() === 'upgrade') return null;
        break;
      case 10:
        if (name.toLowerCase() !== 'connection') break;
        {
          const token = value.toLowerCase();
          if (token === 'close') keepAlive = false;
          else if (token !== 'keep-alive') return null;
        }
        break;
    }
  }
  return { headers, keepAlive, contentLength, end: at + 2, text };
}

function allDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
