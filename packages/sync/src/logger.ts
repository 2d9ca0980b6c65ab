/** The logging the transport needs; `console` fits, and so does any structured logger with these methods. */
export interface SyncLogger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: SyncLogger = { info() {}, warn() {}, error() {}, debug() {} };
