import { hostname } from 'node:os';
import { definePlugin } from '../contract';
import { logEntry } from '../shared/log-entry';
import type { SerializedExchange } from '../shared/log-serializer';
import { queueConfigOf } from '../shared/queue-schema';
import { queuesFor } from '../shared/runtime-queues';
import { runtimeState } from '../shared/runtime-state';
import { UdpSender } from '../shared/udp-sender';
import { TcpLogConnections } from '../tcp-log/connections';
import { statsdLines, statusAllowed } from './metrics';
import { statsdConfigSchema, type StatsdConfig } from './schema';

const senders = runtimeState(() => {
  const udp = new UdpSender();
  const tcp = new TcpLogConnections();
  return {
    udp,
    tcp,
    close: () => {
      udp.close();
      tcp.close();
    },
  };
});

/** Lines packed into datagrams of at most `size` bytes, newline-separated (one line a datagram when size is 0). */
export function packDatagrams(lines: string[], size: number): string[] {
  if (size <= 0) return lines;
  const packets: string[] = [];
  let current = '';
  for (const line of lines) {
    if (current !== '' && Buffer.byteLength(current) + 1 + Buffer.byteLength(line) > size) {
      packets.push(current);
      current = '';
    }
    current = current === '' ? line : `${current}\n${line}`;
  }
  if (current !== '') packets.push(current);
  return packets;
}

async function sendLines(state: ReturnType<typeof senders.of>, config: StatsdConfig, lines: string[]): Promise<void> {
  if (config.use_tcp) {
    const target = { host: config.host, port: config.port, timeout: 1000, keepalive: 60_000, tls: false, tls_sni: null, custom_fields_by_lua: null };
    for (const line of lines) await state.tcp.send(target, `${line}\n`);
    return;
  }
  for (const packet of packDatagrams(lines, config.udp_packet_size)) await state.udp.send(config.host, config.port, packet, 10_000);
}

/**
 * Kong's statsd: each finished exchange whose status is allowed goes through the shared plugin queue; each batch
 * becomes StatsD lines (Kong's metric names, or tags in `tag_style`) sent over UDP (or TCP with `use_tcp`).
 */
export const statsd = definePlugin<StatsdConfig, unknown>({
  name: 'statsd',
  priority: 11,
  version: '3.9.0',
  configSchema: statsdConfigSchema,
  auth: false,
  noConsumer: false,
  init: senders.init,
  log: (ctx, config, summary) => {
    if (!statusAllowed(config, summary.status)) return;
    const pluginId = ctx.pluginId ?? 'statsd';
    const state = senders.of(ctx.runtime);
    const node = hostname();
    const handler = (batch: SerializedExchange[]) => sendLines(state, config, batch.flatMap((entry) => statsdLines(config, entry, node)));
    queuesFor(ctx.runtime).enqueue(
      { name: pluginId, logTag: `statsd plugin ${pluginId}`, owner: pluginId, config: queueConfigOf(config), handler },
      logEntry(ctx, summary, { custom_fields_by_lua: null }, 'statsd'),
    );
  },
});
