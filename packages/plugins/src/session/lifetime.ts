import type { SessionPayload } from './sealed-cookie';
import type { SessionConfig, SessionHeader } from './schema';

/** The timeouts a payload is held to (seconds; 0 = none): the session cookie's, or the remember cookie's. */
export interface Timeouts {
  idling: number;
  rolling: number;
  absolute: number;
}

export const sessionTimeouts = (config: SessionConfig): Timeouts => ({ idling: config.idling_timeout, rolling: config.rolling_timeout, absolute: config.absolute_timeout });
export const rememberTimeouts = (config: SessionConfig): Timeouts => ({ idling: 0, rolling: config.remember_rolling_timeout, absolute: config.remember_absolute_timeout });

/** Seconds left under each timeout (Infinity for one that is off). */
export function remaining(payload: SessionPayload, timeouts: Timeouts, now: number): { idling: number; rolling: number; absolute: number; overall: number } {
  const left = (timeout: number, from: number) => (timeout > 0 ? from + timeout - now : Infinity);
  const idling = left(timeouts.idling, payload.used);
  const rolling = left(timeouts.rolling, payload.renewed);
  const absolute = left(timeouts.absolute, payload.created);
  return { idling, rolling, absolute, overall: Math.min(idling, rolling, absolute) };
}

/** A payload is valid for the configured audience until one of its timeouts runs out. */
export function isValid(payload: SessionPayload, config: SessionConfig, timeouts: Timeouts, now: number): boolean {
  return payload.aud === config.audience && remaining(payload, timeouts, now).overall > 0;
}

/** When a cookie holding `payload` should expire (epoch seconds), or null for a cookie without expiry. */
export function expiryOf(payload: SessionPayload, timeouts: Timeouts, now: number): number | null {
  const overall = remaining(payload, timeouts, now).overall;
  return overall === Infinity ? null : now + overall;
}

/**
 * Whether a used session is sealed again with its idling and rolling clocks moved to now: once a tenth of its
 * shortest of those timeouts has passed since it was last sealed (at least a second), so a busy client does not get a
 * new cookie on every request while an active session never times out.
 */
export function needsRenewal(payload: SessionPayload, timeouts: Timeouts, now: number): boolean {
  const candidates = [timeouts.idling, timeouts.rolling].filter((t) => t > 0);
  if (candidates.length === 0) return false;
  return now - payload.used >= Math.max(1, Math.floor(Math.min(...candidates) / 10));
}

const HEADER_NAMES: Record<SessionHeader, string> = {
  id: 'Session-Id',
  audience: 'Session-Audience',
  subject: 'Session-Subject',
  timeout: 'Session-Timeout',
  'idling-timeout': 'Session-Idling-Timeout',
  'rolling-timeout': 'Session-Rolling-Timeout',
  'absolute-timeout': 'Session-Absolute-Timeout',
};

/** The `request_headers` / `response_headers` a session fills: name → value. */
export function sessionHeaders(which: readonly SessionHeader[], payload: SessionPayload, timeouts: Timeouts, now: number): Array<[string, string]> {
  const left = remaining(payload, timeouts, now);
  const seconds = (value: number) => (value === Infinity ? '0' : String(Math.max(0, Math.floor(value))));
  const values: Record<SessionHeader, string | null> = {
    id: payload.id,
    audience: payload.aud,
    subject: payload.sub,
    timeout: seconds(left.overall),
    'idling-timeout': seconds(left.idling),
    'rolling-timeout': seconds(left.rolling),
    'absolute-timeout': seconds(left.absolute),
  };
  const out: Array<[string, string]> = [];
  for (const header of which) {
    const value = values[header];
    if (value !== null) out.push([HEADER_NAMES[header], value]);
  }
  return out;
}
