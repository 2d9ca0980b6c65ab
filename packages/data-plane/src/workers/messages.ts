import type { Snapshot, SnapshotDelta } from '@gatehouse/core';
import type { Registry } from 'prom-client';
import type { Observation } from '../balancer/health';
import type { ServerStats } from '../server';

/**
 * The messages between a data plane's primary and its proxy workers (node:cluster IPC, JSON: every field is plain
 * data, bytes in base64). Every message carries `gatehouse` so other IPC users (prom-client's own cluster protocol,
 * for one) are left alone.
 */

/**
 * Configuration, always already verified by the primary (signature, schema, compile). `snapshot` replaces the whole
 * config; `delta` is a verified delta the primary applied to its own config; `relabel` moves the serving version
 * forward on an equal hash. A worker that joins late is first sent the primary's current full snapshot, and a worker
 * that cannot take a delta asks for it (`resync`).
 */
export type ConfigMessage =
  | { gatehouse: 'config'; kind: 'snapshot'; snapshot: Snapshot }
  | { gatehouse: 'config'; kind: 'delta'; delta: SnapshotDelta }
  | { gatehouse: 'config'; kind: 'relabel'; version: number };

/** A worker whose config could not take a delta asks for the current full snapshot. */
export interface ResyncMessage {
  gatehouse: 'resync';
}

/** The answer to `hello`, the first message a worker gets: the config to serve before it opens the ports (null: none yet) and the health. */
export interface StartMessage {
  gatehouse: 'start';
  config: ConfigMessage | null;
  health: HealthMessage;
  /** the node's log level changed at run time and still in force (null: the configured one) */
  logLevel: LogLevelMessage | null;
}

/** The health of every balanced address as the primary (active checks, passive results, manual commands) sees it. */
export interface HealthMessage {
  gatehouse: 'health';
  /** [upstream id, address key (`ip:port`), healthy] */
  states: Array<[string, string, boolean]>;
}

/** One call on a shared store of the node, answered by `CallReply` with the same id. */
export interface SharedCall {
  id: number;
  /** a service the primary registered: `rate-limit`, `proxy-cache`, `oauth2-tokens` */
  service: string;
  method: string;
  args: unknown[];
}

/** The calls a worker made in one turn of its event loop, sent as one message. */
export interface CallBatch {
  gatehouse: 'calls';
  calls: SharedCall[];
}

export interface CallReply {
  id: number;
  ok: boolean;
  /** the method's result, or the error message */
  value: unknown;
}

export interface ReplyBatch {
  gatehouse: 'replies';
  replies: CallReply[];
}

/** Passive health observations of proxied exchanges, batched in order; the primary records them. */
export interface PassiveMessage {
  gatehouse: 'passive';
  /** [upstream id, address key, observation, how many in a row] */
  observations: Array<[string, string, Observation, number]>;
}

/** A registry's metrics as prom-client's `getMetricsAsJSON` gives them (what `AggregatorRegistry.aggregate` takes). */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** The primary asks for what a worker counts: its server stats and its metrics (prom-client JSON). */
export interface ReportRequest {
  gatehouse: 'report?';
  id: number;
}

export interface ReportMessage {
  gatehouse: 'report';
  id: number;
  stats: ServerStats;
  metrics: MetricsJson;
}

/** The worker is ready for its start message (messages sent before it listens for them would be lost). */
export interface HelloMessage {
  gatehouse: 'hello';
}

/** The worker opened the proxy ports (after it applied the config the primary sent it first). */
export interface ListeningMessage {
  gatehouse: 'listening';
  port: number;
  tlsPort: number | null;
}

/** Stop accepting, finish what is in flight, exit. */
export interface StopMessage {
  gatehouse: 'stop';
  graceMs: number;
}

/** The access log file is to be opened again (SIGUSR1 on the primary). */
export interface ReopenLogMessage {
  gatehouse: 'reopen-log';
}

/** The node's log level changed at run time (Kong's /debug/…/log-level): `level` for `timeout` seconds (0: until the next change). */
export interface LogLevelMessage {
  gatehouse: 'log-level';
  level: string;
  timeout: number;
}

export type ToWorker = StartMessage | ConfigMessage | HealthMessage | ReplyBatch | ReportRequest | StopMessage | ReopenLogMessage | LogLevelMessage;
export type ToPrimary = HelloMessage | CallBatch | PassiveMessage | ReportMessage | ListeningMessage | ResyncMessage;

/** true for a message of this protocol (the IPC channel also carries Node's and prom-client's own). */
export function isGatehouseMessage(message: unknown): message is { gatehouse: string } {
  return typeof message === 'object' && message !== null && typeof (message as { gatehouse?: unknown }).gatehouse === 'string';
}
