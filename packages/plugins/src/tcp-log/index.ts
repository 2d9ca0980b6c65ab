import { serializeSession } from '../shared/session-serializer';
import { definePlugin, type PluginRuntime } from '../contract';
import { logEntry } from '../shared/log-entry';
import { runtimeState } from '../shared/runtime-state';
import { TcpLogConnections } from './connections';
import { tcpLogConfigSchema, type TcpLogConfig } from './schema';

const connections = runtimeState(() => new TcpLogConnections());

/**
 * Kong's tcp-log: each finished exchange, as Kong's log serializer shapes it, is written as one JSON line to
 * `host:port`, over TLS when `tls` is set (`tls_sni` as the server name), on a connection kept for `keepalive` ms.
 */
export const tcpLog = definePlugin<TcpLogConfig, unknown>({
  name: 'tcp-log',
  priority: 7,
  version: '3.9.0',
  configSchema: tcpLogConfigSchema,
  auth: false,
  noConsumer: false,
  init: connections.init,
  log: (ctx, config, summary) => send(ctx.runtime, config, logEntry(ctx, summary, config, 'tcp-log')),
  streamLog: (ctx, config, session) => send(ctx.runtime, config, serializeSession(session)),
});

async function send(runtime: PluginRuntime, config: TcpLogConfig, entry: unknown): Promise<void> {
  try {
    await connections.of(runtime).send(config, `${JSON.stringify(entry)}\n`);
  } catch (err) {
    runtime.log?.error(`tcp-log: failed to send data to ${config.host}:${config.port}`, { error: err instanceof Error ? err.message : String(err) });
  }
}
