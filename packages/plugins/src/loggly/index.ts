import { hostname } from 'node:os';
import { definePlugin, type PluginRuntime } from '../contract';
import { logEntry } from '../shared/log-entry';
import { serializeSession } from '../shared/session-serializer';
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
 * Kong's loggly: each finished exchange (or stream session, with Kong's stream entry), at the severity its status calls
 * for, is sent over UDP to Loggly's syslog endpoint, unless that severity is below `log_level`.
 */
export const loggly = definePlugin<LogglyConfig, unknown>({
  name: 'loggly',
  priority: 6,
  version: '3.9.0',
  configSchema: logglyConfigSchema,
  auth: false,
  noConsumer: false,
  init: senders.init,
  log: (ctx, config, summary) => send(ctx.runtime, config, summary.status, () => logEntry(ctx, summary, config, 'loggly')),
  streamLog: (ctx, config, session) => send(ctx.runtime, config, session.status, () => serializeSession(session)),
});

async function send(runtime: PluginRuntime, config: LogglyConfig, status: number, entry: () => unknown): Promise<void> {
  const severity = severityOf(config, status);
  if (severity === null) return;
  const line = logglyLine(config, 8 + SEVERITY_CODE[severity], entry());
  try {
    await senders.of(runtime).send(config.host, config.port, line, config.timeout);
  } catch (err) {
    runtime.log?.error(`loggly: failed to send data to ${config.host}:${config.port}`, { error: err instanceof Error ? err.message : String(err) });
  }
}
