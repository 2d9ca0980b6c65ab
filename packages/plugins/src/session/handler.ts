import { randomBytes } from 'node:crypto';
import type { Consumer, SnapshotConfig } from '@gatehouse/core';
import type { AuthResult, PluginContext, PluginResponse, UpstreamResponse } from '../contract';
import { cookieValue, setCookieLine } from './cookies';
import { expiryOf, isValid, needsRenewal, rememberTimeouts, sessionHeaders, sessionTimeouts } from './lifetime';
import { isLogout } from './logout';
import { seal, unseal, type SessionPayload } from './sealed-cookie';
import type { SessionConfig } from './schema';

export interface SessionIndex {
  consumers: Map<string, Consumer>;
}

export function buildSessionIndex(config: Pick<SnapshotConfig, 'consumers'>): SessionIndex {
  return { consumers: new Map(config.consumers.map((c) => [c.id, c])) };
}

/** What the request's session left for the response hook. */
interface OpenSession {
  payload: SessionPayload | null;
  /** Set-Cookie lines to send with the response (a renewed cookie, or the removal of a dead session's) */
  cookies: string[];
}

const LOCALS_KEY = 'session';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The request's session: from the session cookie, else (with `remember`) from the remember cookie. */
function openSession(ctx: PluginContext, config: SessionConfig, now: number): { payload: SessionPayload; remembered: boolean } | null {
  const header = ctx.req.headers.cookie;
  const value = cookieValue(header, config.cookie_name);
  const payload = value === undefined ? null : unseal(value, config.secret, config.cookie_name);
  if (payload !== null && isValid(payload, config, sessionTimeouts(config), now)) return { payload, remembered: false };
  if (!config.remember) return null;
  const kept = cookieValue(header, config.remember_cookie_name);
  const restored = kept === undefined ? null : unseal(kept, config.secret, config.remember_cookie_name);
  if (restored === null || !isValid(restored, config, rememberTimeouts(config), now)) return null;
  return { payload: { ...restored, renewed: now, used: now }, remembered: true };
}

/** The session cookie: a browser-session cookie (the timeouts are enforced on what it holds). */
function sessionCookie(config: SessionConfig, payload: SessionPayload): string {
  return setCookieLine(config, config.cookie_name, seal(payload, config.secret, config.cookie_name), null);
}

function rememberCookie(config: SessionConfig, payload: SessionPayload, now: number): string {
  return setCookieLine(config, config.remember_cookie_name, seal(payload, config.secret, config.remember_cookie_name), expiryOf(payload, rememberTimeouts(config), now), now);
}

function removalCookies(config: SessionConfig): string[] {
  const lines = [setCookieLine(config, config.cookie_name, '', 0)];
  if (config.remember) lines.push(setCookieLine(config, config.remember_cookie_name, '', 0));
  return lines;
}

function loggedOut(config: SessionConfig): AuthResult {
  return { ok: false, response: { status: 200, body: null, setCookies: removalCookies(config) } satisfies PluginResponse };
}

function resume(ctx: PluginContext<SessionIndex>, config: SessionConfig, payload: SessionPayload, remembered: boolean, now: number): AuthResult | null {
  const [consumerId, credentialId] = payload.data;
  const consumer = ctx.index.consumers.get(consumerId);
  if (consumer === undefined) {
    // the consumer is gone: the session ends
    ctx.locals?.set(LOCALS_KEY, { payload: null, cookies: removalCookies(config) } satisfies OpenSession);
    return null;
  }
  const renew = remembered || needsRenewal(payload, sessionTimeouts(config), now);
  const current = renew ? { ...payload, renewed: now, used: now } : payload;
  ctx.locals?.set(LOCALS_KEY, { payload: current, cookies: renew ? [sessionCookie(config, current)] : [] } satisfies OpenSession);
  if (config.request_headers !== null) for (const [name, value] of sessionHeaders(config.request_headers, current, sessionTimeouts(config), now)) ctx.upstream.setHeader(name, value);
  return { ok: true, consumer, credential: { id: credentialId, identifier: credentialId, consumerId: consumer.id } };
}

/**
 * Kong's session access phase: a valid session authenticates the request as the consumer and credential it was opened
 * for (so later authentication plugins with `anonymous` let it through); a logout request ends it with 200. Without a
 * session nothing happens.
 */
export function sessionAuthenticate(ctx: PluginContext<SessionIndex>, config: SessionConfig): AuthResult | null | Promise<AuthResult | null> {
  const now = nowSeconds();
  const opened = openSession(ctx, config, now);
  if (opened === null) return null;
  const logout = isLogout(ctx, config);
  if (logout === true) return loggedOut(config);
  if (logout === false) return resume(ctx, config, opened.payload, opened.remembered, now);
  return logout.then((yes) => (yes ? loggedOut(config) : resume(ctx, config, opened.payload, opened.remembered, now)));
}

function appendSetCookie(res: UpstreamResponse, lines: readonly string[]): void {
  if (lines.length === 0) return;
  const existing = res.headers['set-cookie'];
  res.headers['set-cookie'] = existing === undefined ? [...lines] : [...(Array.isArray(existing) ? existing : [existing]), ...lines];
}

/**
 * Kong's session header filter: a request authenticated by a credential (another plugin's, or the session's own) that
 * the session does not already hold opens a new session, sent as the session cookie (and the remember cookie).
 * Anonymous requests open nothing.
 */
export function sessionResponse(ctx: PluginContext<SessionIndex>, config: SessionConfig, res: UpstreamResponse): void {
  const now = nowSeconds();
  const open = ctx.locals?.get(LOCALS_KEY) as OpenSession | undefined;
  let payload = open?.payload ?? null;
  const cookies = [...(open?.cookies ?? [])];
  const credential = ctx.credential;
  const consumer = ctx.consumer;
  if (credential !== null && consumer !== null && (payload === null || payload.data[0] !== consumer.id || payload.data[1] !== credential.id)) {
    payload = {
      id: randomBytes(32).toString('base64url'),
      aud: config.audience,
      sub: consumer.username ?? consumer.custom_id ?? consumer.id,
      data: [consumer.id, credential.id ?? consumer.id, null],
      created: now,
      renewed: now,
      used: now,
    };
    cookies.length = 0;
    cookies.push(sessionCookie(config, payload));
    if (config.remember) cookies.push(rememberCookie(config, payload, now));
  }
  if (payload !== null && config.response_headers !== null) {
    for (const [name, value] of sessionHeaders(config.response_headers, payload, sessionTimeouts(config), now)) res.headers[name.toLowerCase()] = value;
  }
  appendSetCookie(res, cookies);
}
