import type { ExchangeSummary } from '../contract';
import { serializeExchange, type SerializedExchange } from './log-serializer';

/** What every logging plugin's config carries for its entries. */
export interface LogEntryConfig {
  custom_fields_by_lua: Record<string, string> | null;
}

/**
 * The entry a logging plugin sends for one exchange (Kong's `kong.log.serialize()` after `custom_fields_by_lua`): the
 * one place tcp-log, udp-log, syslog, loggly and the others build it, so a field added here reaches all of them.
 */
export function logEntry(summary: ExchangeSummary, config: LogEntryConfig): SerializedExchange {
  // custom_fields_by_lua is refused at validation while no Lua runtime runs; once one does, its fields apply here
  void config.custom_fields_by_lua;
  return serializeExchange(summary);
}
