import type { PluginRuntime } from '../contract';
import { setCookieLine } from './cookies';
import { seal, unseal, type SessionPayload } from './sealed-cookie';
import type { SessionConfig } from './schema';
import { storedSessions, type StoredSessions } from './stored-sessions';

const HANDLE = /^[A-Za-z0-9_-]{20,64}(\.r)?$/;

/** how long a stored session may live when no timeout bounds it (seconds) */
const UNBOUNDED_TTL = 30 * 86_400;

/**
 * One request's session cookies under the configured storage: `cookie` seals the payload into the cookie; `kong`
 * stores it sealed (`StoredSessions`) and puts a random handle in the cookie. Writes to the store are collected in
 * `writes` for the caller to wait on before the client sees the cookie.
 */
export class SessionCookies {
  readonly writes: Array<Promise<void>> = [];
  private readonly store: StoredSessions | null;

  constructor(
    private readonly config: SessionConfig,
    runtime: PluginRuntime,
  ) {
    this.store = config.storage === 'kong' ? storedSessions(runtime) : null;
  }

  /** The payload a cookie value stands for, or null. */
  open(name: string, value: string): SessionPayload | null | Promise<SessionPayload | null> {
    if (this.store === null) return unseal(value, this.config.secret, name);
    if (!HANDLE.test(value)) return null;
    return this.store.get(value).then((sealed) => (sealed === null ? null : unseal(sealed, this.config.secret, name)));
  }

  /** The Set-Cookie line carrying `payload` under `name`; `ttl` bounds a stored copy (seconds, Infinity: none). */
  line(name: string, payload: SessionPayload, expiresAt: number | null, ttl: number, now: number): string {
    const sealed = seal(payload, this.config.secret, name);
    if (this.store === null) return setCookieLine(this.config, name, sealed, expiresAt, now);
    const handle = name === this.config.remember_cookie_name ? `${payload.id}.r` : payload.id;
    this.writes.push(this.store.set(handle, sealed, Number.isFinite(ttl) ? ttl : UNBOUNDED_TTL));
    return setCookieLine(this.config, name, handle, expiresAt, now);
  }

  /** Set-Cookie lines removing the session's cookies; a stored session is deleted too. */
  removal(payload: SessionPayload | null): string[] {
    const lines = [setCookieLine(this.config, this.config.cookie_name, '', 0)];
    if (this.config.remember) lines.push(setCookieLine(this.config, this.config.remember_cookie_name, '', 0));
    if (this.store !== null && payload !== null) this.writes.push(this.store.delete(payload.id), this.store.delete(`${payload.id}.r`));
    return lines;
  }

  /** Resolves once every store write of this request is done. */
  async settled(): Promise<void> {
    await Promise.all(this.writes);
  }
}
