import { hostname } from 'node:os';
import { definePlugin } from '../contract';
import { logEntry } from '../shared/log-entry';
import { SEVERITY_CODE, severityOf } from '../shared/log-target';
import { runtimeState } from '../shared/runtime-state';
import { UdpSender } from '../shared/udp-sender';
import { logglyConfigSchema, type LogglyConfig } from './schema';

const senders = runtimeState(() => new UdpSender());

/** Loggly's syslog line: RFC 5424 with facility user, the customer token and tags as structured data, the entry as message. */
export function logglyLine(config: LogglyConfig, priority: number, entry: unknown, now = new Date()): string {
  const timestamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const tags = config.tags.map((t) => `tag="${t}"`).join(' ');
  return [`<${priority}>1`, timestamp, hostname(), 'kong', '-', '-', `[${config.key}@41058`, `${tags}]`, JSON.stringify(entry)].join(' ');
}

/**
 * Kong's loggly: each finished exchange, at the severity its status calls for, is sent over UDP to Loggly's syslog
 * endpoint, unless that severity is below `log_level`.
 */
export const loggly = definePlugin<LogglyConfig, unknown>({
  name: 'loggly',
  priority: 6,
  version: '3.9.0',
  configSchema: logglyConfigSchema,
  auth: false,
  noConsumer: false,
  init: senders.init,
  log: async (ctx, config, summary) => {
    const severity = severityOf(config, summary.status);
    if (severity === null) return;
    const line = logglyLine(config, 8 + SEVERITY_CODE[severity], logEntry(ctx, summary, config, 'loggly'));
    try {
      await senders.of(ctx.runtime).send(config.host, config.port, line, config.timeout);
    } catch (err) {
      ctx.runtime.log?.error(`loggly: failed to send data to ${config.host}:${config.port}`, { error: err instanceof Error ? err.message : String(err) });
    }
  },
});
