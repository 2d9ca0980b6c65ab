import { serializeSession } from '../shared/session-serializer';
import { definePlugin, type PluginRuntime } from '../contract';
import { logEntry } from '../shared/log-entry';
import { runtimeState } from '../shared/runtime-state';
import { UdpSender } from '../shared/udp-sender';
import { udpLogConfigSchema, type UdpLogConfig } from './schema';

const senders = runtimeState(() => new UdpSender());

/** Kong's udp-log: each finished exchange, as Kong's log serializer shapes it, is sent as one JSON datagram to `host:port`. */
export const udpLog = definePlugin<UdpLogConfig, unknown>({
  name: 'udp-log',
  priority: 8,
  version: '3.9.0',
  configSchema: udpLogConfigSchema,
  auth: false,
  noConsumer: false,
  init: senders.init,
  log: (ctx, config, summary) => send(ctx.runtime, config, logEntry(ctx, summary, config, 'udp-log')),
  streamLog: (ctx, config, session) => send(ctx.runtime, config, serializeSession(session)),
});

async function send(runtime: PluginRuntime, config: UdpLogConfig, entry: unknown): Promise<void> {
  try {
    await senders.of(runtime).send(config.host, config.port, JSON.stringify(entry), config.timeout);
  } catch (err) {
    runtime.log?.error(`udp-log: could not send data to ${config.host}:${config.port}`, { error: err instanceof Error ? err.message : String(err) });
  }
}
