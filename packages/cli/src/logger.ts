import type { Settings } from './settings';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;

/** Kong's log levels, most verbose first, and the level of ours each one logs at. */
export const KONG_LOG_LEVELS = { debug: 'debug', info: 'info', notice: 'info', warn: 'warn', error: 'error', crit: 'error', alert: 'error', emerg: 'error' } as const;
export type KongLogLevel = keyof typeof KONG_LOG_LEVELS;

/**
 * The process's level changed at run time (`PUT /debug/node/log-level/{level}`), over the configured one of every
 * logger, until `timeoutSeconds` pass (0: until the next change or restart).
 */
const runtime: { level: KongLogLevel | null; timer: NodeJS.Timeout | null; configured: KongLogLevel } = { level: null, timer: null, configured: 'info' };

const followers = new Set<(level: KongLogLevel, timeoutSeconds: number) => void>();

/** Calls `follow` on every run-time change of this process's level (a data plane's primary passes it to its workers). */
export function followRuntimeLogLevel(follow: (level: KongLogLevel, timeoutSeconds: number) => void): () => void {
  followers.add(follow);
  return () => followers.delete(follow);
}

/** Whether `value` is one of Kong's log level names. */
export const isKongLogLevel = (value: unknown): value is KongLogLevel => typeof value === 'string' && Object.hasOwn(KONG_LOG_LEVELS, value);

export function setRuntimeLogLevel(level: KongLogLevel, timeoutSeconds: number): void {
  for (const follow of followers) follow(level, timeoutSeconds);
  if (runtime.timer) clearTimeout(runtime.timer);
  runtime.level = level;
  runtime.timer = null;
  if (timeoutSeconds > 0) {
    runtime.timer = setTimeout(() => {
      runtime.level = null;
      runtime.timer = null;
    }, timeoutSeconds * 1000);
    runtime.timer.unref();
  }
}

/** The level the process logs at now, in Kong's names. */
export function currentLogLevel(): KongLogLevel {
  return runtime.level ?? runtime.configured;
}

/** One JSON line per event on stderr, so stdout stays readable for people and scripts. */
export function createLogger(level: Settings['logLevel'], component: string): Logger {
  runtime.configured = level;
  const min = () => LEVELS[runtime.level ? KONG_LOG_LEVELS[runtime.level] : level];
  const write = (lvl: keyof typeof LEVELS) => (message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min()) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, component, message, ...fields })}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
