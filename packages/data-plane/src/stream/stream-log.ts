import type { Socket } from 'node:net';
import type { Route, Service } from '@gatehouse/core';
import type { PluginDefinition, PluginRuntime, StreamSessionSummary } from '@gatehouse/plugins';
import { orderedGroups } from '../compile/compile';
import { resolveScope } from '../compile/scope';
import type { CompiledConfig, PluginInstance } from '../compile/types';
import type { UdpBytes } from './udp-sessions';

/** One plugin configuration whose `streamLog` hook runs when a session of the route ends. */
export interface StreamLogStep {
  plugin: PluginDefinition;
  instance: PluginInstance;
}

/** session protocol → the log steps for it, in priority order */
export type StreamLogSteps = ReadonlyMap<string, readonly StreamLogStep[]>;

const NONE: StreamLogSteps = new Map();

/**
 * The logging plugins of a stream route, per protocol of the route: for each plugin with a `streamLog` hook, the most
 * specific configuration without a consumer (route+service > route > service > global, as Kong ranks them) among those
 * whose `protocols` take the session's protocol.
 */
export function streamLogSteps(config: CompiledConfig, route: Route, protocols: ReadonlySet<string>): StreamLogSteps {
  const parts = config.incremental;
  if (parts === undefined) return NONE;
  const groups = orderedGroups(parts.groups).filter((group) => group.def.streamLog !== undefined);
  if (groups.length === 0) return NONE;
  const protocolsOf = new Map<string, readonly unknown[]>();
  for (const row of parts.state.list('plugins')) protocolsOf.set(row.id, Array.isArray(row.protocols) ? row.protocols : []);
  const out = new Map<string, StreamLogStep[]>();
  for (const protocol of protocols) {
    const steps: StreamLogStep[] = [];
    for (const group of groups) {
      const candidates = [...group.candidates.values()].filter((c) => c.row.consumer === null && (protocolsOf.get(c.instance.id) ?? []).includes(protocol));
      const { base } = resolveScope(candidates, route.id, route.service?.id ?? null);
      if (base !== null) steps.push({ plugin: group.def, instance: base });
    }
    if (steps.length > 0) out.set(protocol, steps);
  }
  return out.size > 0 ? out : NONE;
}

/** Runs the `streamLog` hooks for one finished session; failures are logged, never thrown. */
export function runStreamLog(
  steps: readonly StreamLogStep[],
  runtime: PluginRuntime,
  session: StreamSessionSummary,
  log: { error(message: string, detail?: Record<string, unknown>): void },
): void {
  for (const { plugin, instance } of steps) {
    const failed = (err: unknown) => log.error('plugin log phase failed', { plugin_id: instance.id, plugin: instance.name, error: err instanceof Error ? err.message : String(err) });
    try {
      plugin.streamLog!({ runtime, pluginId: instance.id }, instance.config, session)?.catch(failed);
    } catch (err) {
      failed(err);
    }
  }
}

/** What a stream session's log entry is built from besides its byte counts. */
export interface SessionFacts {
  steps: readonly StreamLogStep[];
  route: Route;
  service: Service | null;
  clientIp: string;
  serverPort: number;
  startedAt: number;
  tls: StreamSessionSummary['tls'];
}

/**
 * The log of one TCP or TLS session: the status and the upstream's connection are noted as the session goes, and the
 * route's logging plugins run once the client's connection closes.
 */
export class TcpSessionLog {
  status = 200;
  kong = 0;
  target: { host: string; port: number } | null = null;
  upstream: Socket | null = null;
  /** the upstream's connection came up */
  up = false;

  constructor(
    private readonly facts: SessionFacts,
    private readonly runtime: PluginRuntime,
    private readonly log: { error(message: string, detail?: Record<string, unknown>): void },
  ) {}

  /** the upstream's connection is up */
  connected(): void {
    this.up = true;
    this.kong = Date.now() - this.facts.startedAt;
  }

  /** the client's connection closed */
  closed(client: Socket): void {
    const { facts, upstream } = this;
    runStreamLog(facts.steps, this.runtime, {
      startedAt: facts.startedAt,
      clientIp: facts.clientIp,
      serverPort: facts.serverPort,
      status: this.status,
      received: client.bytesRead,
      sent: client.bytesWritten,
      upstreamReceived: upstream?.bytesRead ?? 0,
      upstreamSent: upstream?.bytesWritten ?? 0,
      latencies: { kong: this.kong, session: Date.now() - facts.startedAt },
      tls: facts.tls,
      route: facts.route,
      service: facts.service,
      upstreamTarget: this.target,
    }, this.log);
  }
}

/** Runs the logging plugins of a UDP session once it is closed (idle past the service's read timeout). */
export function udpSessionEnded(
  facts: SessionFacts,
  target: { host: string; port: number },
  bytes: UdpBytes,
  runtime: PluginRuntime,
  log: { error(message: string, detail?: Record<string, unknown>): void },
): void {
  runStreamLog(facts.steps, runtime, {
    startedAt: facts.startedAt,
    clientIp: facts.clientIp,
    serverPort: facts.serverPort,
    status: 200,
    received: bytes.received,
    sent: bytes.replied,
    upstreamReceived: bytes.replied,
    upstreamSent: bytes.received,
    latencies: { kong: 0, session: Date.now() - facts.startedAt },
    tls: null,
    route: facts.route,
    service: facts.service,
    upstreamTarget: target,
  }, log);
}
