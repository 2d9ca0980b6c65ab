import { CR, LF, plainLines, SP } from '../plain-head/lines';
import type { Head } from './simple-head';

/** the methods the narrow path reads; others (CONNECT, WebDAV's, extension methods) go to llhttp */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
const LONGEST_METHOD = 7;
/** ` HTTP/1.1` after the request target */
const VERSION = [SP, 0x48, 0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e, 0x31];

/**
 * The front lane's narrow path for the commonest request head: `METHOD /origin-form HTTP/1.1`, plain header lines, no
 * body. Read in JavaScript: no call into llhttp's binding and none back out of it per event. What it takes is a strict
 * subset of what llhttp (strict mode) takes, read to the same head; anything else is null, and llhttp reads the head
 * as before (and refuses what it refuses). Null, besides what `plainLines` leaves to llhttp, for:
 * - a method outside `METHODS`, a target that does not start with `/` or holds anything but visible ASCII other than
 *   `#`, a version other than HTTP/1.1;
 * - a Content-Length other than 0 (a body: the lane hands the connection to node:http).
 * `bytes[0, headLength)` is the whole head, up to and with its blank line.
 */
export function plainRequestHead(bytes: Buffer, headLength: number): Head | null {
  let at = 0;
  while (at <= LONGEST_METHOD && bytes[at] !== SP) at++;
  if (at > LONGEST_METHOD || at === 0) return null;
  const methodEnd = at;
  if (bytes[++at] !== 0x2f /* / */) return null;
  const targetStart = at;
  for (let c = bytes[at]!; c !== SP; c = bytes[++at]!) if (c < 0x21 || c > 0x7e || c === 0x23 /* # */ || at >= headLength) return null;
  const targetEnd = at;
  for (let i = 0; i < VERSION.length; i++) if (bytes[at + i] !== VERSION[i]) return null;
  at += VERSION.length;
  if (bytes[at] !== CR || bytes[at + 1] !== LF) return null;
  const lines = plainLines(bytes, at + 2, headLength);
  if (lines === null || lines.end !== headLength || lines.contentLength > 0) return null;
  const method = lines.text.slice(0, methodEnd);
  if (!METHODS.has(method)) return null;
  return {
    major: 1,
    minor: 1,
    raw: lines.headers,
    method,
    url: lines.text.slice(targetStart, targetEnd),
    upgrade: false,
    keepAlive: lines.keepAlive,
    complete: true,
  };
}
