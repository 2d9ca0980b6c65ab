import { STATUS_CODES } from 'node:http';

/** Header values Node refuses (a control character other than tab): a response never carries them. */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** RFC 9110 token characters, as Node checks header names */
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;

/** names already found valid: responses repeat the same few (bounded, so odd names cannot grow it without end) */
const validNames = new Set<string>();
const MAX_VALID_NAMES = 1024;

/** Checks one response header as node:http's setHeader does; throws its error for a name or value it refuses. */
export function checkHeader(name: string, value: string): void {
  if (!validNames.has(name)) checkName(name);
  if (INVALID_VALUE.test(value)) throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), { code: 'ERR_INVALID_CHAR' });
}

function checkName(name: string): void {
  if (!TOKEN.test(name)) throw Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), { code: 'ERR_INVALID_HTTP_TOKEN' });
  if (validNames.size < MAX_VALID_NAMES) validNames.add(name);
}

let dateText = '';
let dateSecond = -1;

/** The `Date` value, made once a second (as Node caches it). */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** What the lane's connection adds to a head, as node:http does: keep-alive or close, and the framing. */
export interface HeadFraming {
  keepAlive: boolean;
  /** Keep-Alive's `timeout`, in seconds; 0: none */
  keepAliveSeconds: number;
  chunked: boolean;
  /** the length node:http adds when the whole body came with end(); -1: none */
  contentLength: number;
}

/** What a head already says about the connection and the body's length. */
export interface HeadFacts {
  hasLength: boolean;
  hasEncoding: boolean;
  hasDate: boolean;
  /** the response's own Connection header, lower-case; null when it has none */
  connection: string | null;
}

/** The facts of a header list (`[name, value, …]`), each header checked as Node checks it. */
export function headFacts(list: readonly string[]): HeadFacts {
  const facts: HeadFacts = { hasLength: false, hasEncoding: false, hasDate: false, connection: null };
  for (let i = 0; i < list.length; i += 2) {
    const name = list[i]!;
    checkHeader(name, list[i + 1]!);
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === 'date') facts.hasDate = true;
        break;
      case 10:
        if (name.toLowerCase() === 'connection') facts.connection = list[i + 1]!.toLowerCase();
        break;
      case 14:
        if (name.toLowerCase() === 'content-length') facts.hasLength = true;
        break;
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') facts.hasEncoding = true;
        break;
    }
  }
  return facts;
}

/** The head bytes, written as node:http writes them (latin1), with Date, Connection and Keep-Alive after the response's own. */
export function serialiseHead(status: number, reason: string | undefined, list: readonly string[], facts: HeadFacts, framing: HeadFraming): string {
  let head = `HTTP/1.1 ${status} ${reason ?? STATUS_CODES[status] ?? 'unknown'}\r\n`;
  for (let i = 0; i < list.length; i += 2) head += `${list[i]}: ${list[i + 1]}\r\n`;
  if (!facts.hasDate) head += `Date: ${httpDate()}\r\n`;
  if (facts.connection === null) {
    if (framing.keepAlive) {
      head += 'Connection: keep-alive\r\n';
      if (framing.keepAliveSeconds > 0) head += `Keep-Alive: timeout=${framing.keepAliveSeconds}\r\n`;
    } else head += 'Connection: close\r\n';
  }
  if (framing.contentLength >= 0) head += `Content-Length: ${framing.contentLength}\r\n`;
  else if (framing.chunked) head += 'Transfer-Encoding: chunked\r\n';
  return `${head}\r\n`;
}
