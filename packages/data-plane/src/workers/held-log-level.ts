import type { LogLevelMessage } from './messages';

/** The node's log level set at run time, as the primary keeps it for the workers that start while it holds. */
export class HeldLogLevel {
  private held: { level: string; until: number | null } | null = null;

  /** Holds `level` for `timeoutSeconds` (0: until the next change); the message that tells the workers. */
  set(level: string, timeoutSeconds: number): LogLevelMessage {
    this.held = { level, until: timeoutSeconds > 0 ? Date.now() + timeoutSeconds * 1000 : null };
    return { gatehouse: 'log-level', level, timeout: timeoutSeconds };
  }

  /** What a worker starting now takes: the level for what is left of its timeout, or null once it lapsed. */
  now(): LogLevelMessage | null {
    const held = this.held;
    if (!held) return null;
    if (held.until === null) return { gatehouse: 'log-level', level: held.level, timeout: 0 };
    const left = (held.until - Date.now()) / 1000;
    return left > 0 ? { gatehouse: 'log-level', level: held.level, timeout: left } : null;
  }
}
