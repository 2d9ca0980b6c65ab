import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { PluginRequest } from '../contract';
import type { HmacAlgorithm } from './schema';

/** The fields of `Authorization: hmac username="…", algorithm="…", headers="…", signature="…"`. */
export interface HmacParams {
  username: string;
  algorithm: string;
  /** the header names as listed by the client, in order */
  headers: string[];
  /** base64 as sent */
  signature: string;
}

// Kong's pattern: the four fields in this order, values in double quotes, found anywhere in the header
const HMAC_HEADER = /\s*[Hh]mac\s*username="(.+)",\s*algorithm="(.+)",\s*headers="(.+)",\s*signature="(.+)"/;

export function parseHmacHeader(value: string | undefined): HmacParams | null {
  if (value === undefined) return null;
  const m = HMAC_HEADER.exec(value);
  if (!m) return null;
  return { username: m[1]!, algorithm: m[2]!, headers: m[3]!.split(' '), signature: m[4]! };
}

/** A header's first value; names are matched without case, and `_` also finds `-`, as Kong's get_header does. */
export function headerValue(req: PluginRequest, name: string): string | undefined {
  const lower = name.toLowerCase();
  let value = req.headers[lower];
  if (value === undefined && lower.includes('_')) value = req.headers[lower.replaceAll('_', '-')];
  return Array.isArray(value) ? value[0] : value;
}

const MONTHS: Record<string, number> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };
const RFC1123 = /^[A-Za-z]+, (\d{1,2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2})(?: GMT)?$/;
const RFC850 = /^[A-Za-z]+, (\d{1,2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?: GMT)?$/;
const ASCTIME = /^[A-Za-z]+ ([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

function utcSeconds(year: number, month: string, day: number, h: string, m: string, s: string): number | null {
  const monthIndex = MONTHS[month];
  if (monthIndex === undefined || day < 1 || day > 31 || Number(h) > 23 || Number(m) > 59 || Number(s) > 60) return null;
  return Date.UTC(year, monthIndex, day, Number(h), Number(m), Number(s)) / 1000;
}

/** An HTTP date in one of the three forms nginx accepts (RFC 1123, RFC 850, asctime), as epoch seconds. */
export function parseHttpDate(value: string): number | null {
  const text = value.trim();
  let m = RFC1123.exec(text);
  if (m) return utcSeconds(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = RFC850.exec(text);
  if (m) {
    const short = Number(m[3]);
    return utcSeconds(short < 70 ? 2000 + short : 1900 + short, m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME.exec(text);
  if (m) return utcSeconds(Number(m[6]), m[1]!, Number(m[2]), m[3]!, m[4]!, m[5]!);
  return null;
}

/** `X-Date` or `Date` within the allowed skew of the gateway's clock (either one will do, X-Date tried first). */
export function dateWithinSkew(req: PluginRequest, clockSkewSeconds: number, nowSeconds: number): boolean {
  for (const name of ['x-date', 'date']) {
    const value = headerValue(req, name);
    if (value === undefined) continue;
    const sent = parseHttpDate(value);
    if (sent !== null && Math.abs(nowSeconds - sent) <= clockSkewSeconds) return true;
  }
  return false;
}

/**
 * The string the client signed: for each listed header `name: value`, joined by newlines. Names no header has:
 * `request-line` stands for `METHOD /path?query HTTP/<version>` (the request's own HTTP version, `1.1` when the caller
 * does not say), `@request-target` for `@request-target: <method in lower case> /path?query`; any other gives `name:`.
 */
export function signingString(req: PluginRequest, headerNames: readonly string[], rawQuery: string): string {
  const lines: string[] = [];
  const target = rawQuery === '' ? req.path : `${req.path}?${rawQuery}`;
  for (const name of headerNames) {
    const value = headerValue(req, name);
    if (value !== undefined) lines.push(`${name}: ${value}`);
    else if (name === 'request-line') lines.push(`${req.method} ${target} HTTP/${req.httpVersion ?? '1.1'}`);
    else if (name === '@request-target') lines.push(`@request-target: ${req.method.toLowerCase()} ${target}`);
    else lines.push(`${name}:`);
  }
  return lines.join('\n');
}

const DIGESTS: Record<HmacAlgorithm, string> = {
  'hmac-sha1': 'sha1',
  'hmac-sha256': 'sha256',
  'hmac-sha384': 'sha384',
  'hmac-sha512': 'sha512',
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Compares the expected HMAC with the client's base64 signature in constant time. */
export function signatureMatches(algorithm: HmacAlgorithm, secret: Buffer, signed: string, givenBase64: string): boolean {
  if (!BASE64.test(givenBase64)) return false;
  const given = Buffer.from(givenBase64, 'base64');
  const expected = createHmac(DIGESTS[algorithm], secret).update(signed, 'utf8').digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `Digest: SHA-256=<base64>` must describe the body exactly; with no Digest header the body must be empty. */
export function bodyMatchesDigest(body: Buffer, digestHeader: string | undefined): boolean {
  if (digestHeader === undefined) return body.length === 0;
  const expected = Buffer.from(`SHA-256=${createHash('sha256').update(body).digest('base64')}`);
  const given = Buffer.from(digestHeader);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
