import { hostname } from 'node:os';
import { serializeSession } from '../shared/session-serializer';
import { definePlugin, type PluginRuntime } from '../contract';
import { logEntry } from '../shared/log-entry';
import { SEVERITY_CODE, severityOf } from '../shared/log-target';
import { runtimeState } from '../shared/runtime-state';
import { syslogConfigSchema, FACILITY_CODE, type SyslogConfig } from './schema';
import { DEFAULT_SYSLOG_ADDRESS, parseSyslogAddress, SyslogTransport } from './transport';

const transports = runtimeState((runtime) => new SyslogTransport(parseSyslogAddress(runtime.syslogAddress ?? DEFAULT_SYSLOG_ADDRESS)));

/** One RFC 5424 line: `<PRI>1 TIMESTAMP HOSTNAME kong PROCID - - MSG`, the message being the log entry as JSON. */
export function syslogLine(priority: number, entry: unknown, now = new Date()): string {
  return `<${priority}>1 ${now.toISOString()} ${hostname()} kong ${process.pid} - - ${JSON.stringify(entry)}`;
}

/**
 * Kong's syslog: each finished exchange, at the severity its status calls for (unless below `log_level`), goes to the
 * node's syslog (`GATEHOUSE_SYSLOG_ADDRESS`: the local socket by default, or a UDP address) under `facility`.
 */
export const syslog = definePlugin<SyslogConfig, unknown>({
  name: 'syslog',
  priority: 4,
  version: '3.9.0',
  configSchema: syslogConfigSchema,
  auth: false,
  noConsumer: false,
  init: transports.init,
  log: (ctx, config, summary) => send(ctx.runtime, config, summary.status, () => logEntry(ctx, summary, config, 'syslog')),
  streamLog: (ctx, config, session) => send(ctx.runtime, config, session.status, () => serializeSession(session)),
});

async function send(runtime: PluginRuntime, config: SyslogConfig, status: number, entry: () => unknown): Promise<void> {
  const severity = severityOf(config, status);
  if (severity === null) return;
  const line = syslogLine(FACILITY_CODE[config.facility] * 8 + SEVERITY_CODE[severity], entry());
  try {
    await transports.of(runtime).send(line);
  } catch (err) {
    runtime.log?.error('syslog: could not send the entry', { error: err instanceof Error ? err.message : String(err) });
  }
}
