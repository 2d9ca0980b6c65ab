import type { Settings } from './settings';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;

/** One JSON line per event on stderr, so stdout stays readable for people and scripts. */
export function createLogger(level: Settings['logLevel'], component: string): Logger {
  const min = LEVELS[level];
  const write = (lvl: keyof typeof LEVELS) => (message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, component, message, ...fields })}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
