import type { ExchangeSummary, PluginContext } from '../contract';
import { customFieldValues } from './custom-fields';
import { serializeExchange, type SerializedExchange } from './log-serializer';

/** What every logging plugin's config carries for its entries. */
export interface LogEntryConfig {
  custom_fields_by_lua: Record<string, string> | null;
}

/**
 * The entry a logging plugin sends for one exchange (Kong's `kong.log.serialize()` after `custom_fields_by_lua`): the
 * one place tcp-log, udp-log, syslog, loggly and the others build it, so a field added here reaches all of them.
 */
export function logEntry(ctx: PluginContext, summary: ExchangeSummary, config: LogEntryConfig, plugin: string): SerializedExchange {
  return serializeExchange(summary, customFieldValues(ctx, config.custom_fields_by_lua, summary, plugin));
}
