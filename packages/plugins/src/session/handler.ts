import { randomBytes } from 'node:crypto';
import type { Consumer, SnapshotConfig } from '@gatehouse/core';
import type { AuthResult, PluginContext, PluginResponse, UpstreamResponse } from '../contract';
import { cookieValue } from './cookies';
import { expiryOf, isValid, needsRenewal, remaining, rememberTimeouts, sessionHeaders, sessionTimeouts } from './lifetime';
import { SessionCookies } from './session-cookies';
import { isLogout } from './logout';
import type { SessionPayload } from './sealed-cookie';
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

type Opened = { payload: SessionPayload; remembered: boolean } | null;

function chain<T, R>(value: T | Promise<T>, next: (value: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** The request's session: from the session cookie, else (with `remember`) from the remember cookie. */
function openSession(ctx: PluginContext, config: SessionConfig, cookies: SessionCookies, now: number): Opened | Promise<Opened> {
  const header = ctx.req.headers.cookie;
  const value = cookieValue(header, config.cookie_name);
  return chain(value === undefined ? null : cookies.open(config.cookie_name, value), (payload): Opened | Promise<Opened> => {
    if (payload !== null && isValid(payload, config, sessionTimeouts(config), now)) return { payload, remembered: false };
    if (!config.remember) return null;
    const kept = cookieValue(header, config.remember_cookie_name);
    return chain(kept === undefined ? null : cookies.open(config.remember_cookie_name, kept), (restored): Opened => {
      if (restored === null || !isValid(restored, config, rememberTimeouts(config), now)) return null;
      return { payload: { ...restored, renewed: now, used: now }, remembered: true };
    });
  });
}

/** The session cookie: a browser-session cookie (the timeouts are enforced on what it holds). */
function sessionCookie(config: SessionConfig, cookies: SessionCookies, payload: SessionPayload, now: number): string {
  return cookies.line(config.cookie_name, payload, null, remaining(payload, sessionTimeouts(config), now).overall, now);
}

function rememberCookie(config: SessionConfig, cookies: SessionCookies, payload: SessionPayload, now: number): string {
  const timeouts = rememberTimeouts(config);
  return cookies.line(config.remember_cookie_name, payload, expiryOf(payload, timeouts, now), remaining(payload, timeouts, now).overall, now);
}

async function loggedOut(cookies: SessionCookies, payload: SessionPayload): Promise<AuthResult> {
  const setCookies = cookies.removal(payload);
  await cookies.settled();
  return { ok: false, response: { status: 200, body: null, setCookies } satisfies PluginResponse };
}

function resume(ctx: PluginContext<SessionIndex>, config: SessionConfig, cookies: SessionCookies, opened: NonNullable<Opened>, now: number): AuthResult | null | Promise<AuthResult | null> {
  const { payload, remembered } = opened;
  const [consumerId, credentialId] = payload.data;
  const consumer = ctx.index.consumers.get(consumerId);
  if (consumer === undefined) {
    // the consumer is gone: the session ends
    ctx.locals?.set(LOCALS_KEY, { payload: null, cookies: cookies.removal(payload) } satisfies OpenSession);
    // a stored copy that cannot be deleted now expires with its timeouts
    void cookies.settled().catch(() => undefined);
    return null;
  }
  const renew = remembered || needsRenewal(payload, sessionTimeouts(config), now);
  const current = renew ? { ...payload, renewed: now, used: now } : payload;
  ctx.locals?.set(LOCALS_KEY, { payload: current, cookies: renew ? [sessionCookie(config, cookies, current, now)] : [] } satisfies OpenSession);
  if (config.request_headers !== null) for (const [name, value] of sessionHeaders(config.request_headers, current, sessionTimeouts(config), now)) ctx.upstream.setHeader(name, value);
  const result: AuthResult = { ok: true, consumer, credential: { id: credentialId, identifier: credentialId, consumerId: consumer.id } };
  return cookies.writes.length === 0 ? result : cookies.settled().then(() => result);
}

/**
 * Kong's session access phase: a valid session authenticates the request as the consumer and credential it was opened
 * for (so later authentication plugins with `anonymous` let it through); a logout request ends it with 200. Without a
 * session nothing happens.
 */
export function sessionAuthenticate(ctx: PluginContext<SessionIndex>, config: SessionConfig): AuthResult | null | Promise<AuthResult | null> {
  const now = nowSeconds();
  const cookies = new SessionCookies(config, ctx.runtime);
  return chain(openSession(ctx, config, cookies, now), (opened) => {
    if (opened === null) return null;
    return chain(isLogout(ctx, config), (logout) => (logout ? loggedOut(cookies, opened.payload) : resume(ctx, config, cookies, opened, now)));
  });
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
    const jar = new SessionCookies(config, ctx.runtime);
    cookies.length = 0;
    cookies.push(sessionCookie(config, jar, payload, now));
    if (config.remember) cookies.push(rememberCookie(config, jar, payload, now));
    // a stored session is in place before the client has its handle
    if (jar.writes.length > 0) res.captureBody(() => jar.settled());
  }
  if (payload !== null && config.response_headers !== null) {
    for (const [name, value] of sessionHeaders(config.response_headers, payload, sessionTimeouts(config), now)) res.headers[name.toLowerCase()] = value;
  }
  appendSetCookie(res, cookies);
}
