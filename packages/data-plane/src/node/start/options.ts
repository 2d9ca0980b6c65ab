import type { PluginRuntime, TracingSettings } from '@gatehouse/plugins';
import type { ConfigBus, HealthChannel, RedisClient } from '@gatehouse/sync';
import type { Registry } from 'prom-client';
import type { DnsRecordType } from '../../balancer';
import type { ConfigHolder } from '../../config-holder';
import type { DataPlaneMetrics } from '../../metrics/data-plane-metrics';
import type { DataPlaneServer } from '../../server';
import type { StatusServer } from '../../status-server';
import type { StreamListen } from '../../stream/stream-proxy';
import type { WorkerPool } from '../../workers';
import type { BusFeed } from '../bus-feed';

/** What a starting data plane logs through: one JSON line per event, in the CLI. */
export interface DataPlaneLog {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The process's run-time log level (Kong's /debug/…/log-level), which the plugins read and the workers follow. */
export interface RuntimeLogLevel {
  /** the level the process logs at now, in Kong's names */
  current(): string;
  /** calls `change` on every run-time change of the level; returns what stops it */
  follow(change: (level: string, timeoutSeconds: number) => void): () => void;
  /** applies a level the primary sends (a name it does not know is ignored) */
  set(level: string, timeoutSeconds: number): void;
}

/** The node's one metrics registry and what the data plane adds to it. */
export interface NodeMetricsHooks {
  registry: Registry;
  /** Redis connections whose state the node reports */
  watchRedis(client: RedisClient): void;
  /** serves the node's metrics from `source` (a primary and its workers) */
  aggregateWith(source: Pick<Registry, 'metrics'>): void;
}

/** A listener with the flags Node honours (`backlog`, `reusePort`, `proxyProtocol`). */
export interface ProxyListen {
  host: string;
  port: number;
  backlog?: number;
  reusePort?: boolean;
  proxyProtocol?: boolean;
}

/** The proxy server's listeners and request handling, the same in a single process and in each proxy worker. */
export interface ProxySettings {
  listen: ProxyListen;
  /** the plain listener also takes HTTP/2 in clear text */
  h2c: boolean;
  streamListen: StreamListen[];
  /** the TLS listener; null: none */
  tlsListen: ProxyListen | null;
  /** the default certificate's files; null: the data directory's self-signed pair */
  tlsCertificate: { cert: string; key: string } | null;
  trustedIps: string[];
  realIp: { header: string; recursive: boolean } | null;
  underscoreHeaders: boolean;
  frontLane: boolean;
  maxBufferedBody: number;
  /** ms a client has to send its request headers */
  headersTimeout: number;
  /** ms an idle keep-alive connection is kept */
  keepAliveTimeout: number;
  /** Kong's `headers` setting (which headers the gateway adds) */
  headers: string;
  /** Kong's `headers_upstream` */
  headersUpstream: string;
  /** Kong's `error_default_type`; null: JSON */
  errorDefaultType: string | null;
  tracing: TracingSettings;
}

/** What a data plane process is configured with: the same for a node and for each of its proxy workers. */
export interface DataPlaneSettings {
  /** the node's id (heartbeats, status, metrics) */
  id: string;
  /** the gateway's version (heartbeats, the `Server` header) */
  version: string;
  proxy: ProxySettings;
  /** Redis shared by the plugins (rate-limiting's redis policy), proxy-cache purges and acme orders; null: none */
  redisUrl: string | null;
  redisPrefix: string;
  /** where the syslog plugin sends */
  syslogAddress: string;
  /** the disk cache and the self-signed certificate's directory */
  dataDir: string;
  /** the access log's destination: `stdout`, a file path, or null (off) */
  accessLog: string | null;
  /** DNS servers of upstream names (empty: the system's) and the record types asked, in order */
  dnsResolver: string[];
  dnsOrder: DnsRecordType[];
  log: DataPlaneLog;
  logLevel: RuntimeLogLevel;
}

/** A data plane node: its settings, and what it shares with the rest of the process. */
export interface DataPlaneStartOptions extends DataPlaneSettings {
  /** proxy worker processes (1: the proxy runs in this process) */
  workers: number;
  /** environment every proxy worker gets, so it reads the same settings as this process */
  workerEnv: Record<string, string>;
  /** the status listener; null: none */
  statusListen: { host: string; port: number } | null;
  /** Kong's cluster_dp_labels, sent with the heartbeats */
  labels: Record<string, string>;
  bus: ConfigBus;
  /** the cluster secret snapshots are signed with */
  secret: string;
  /** target health to the control plane and manual health back; null: none */
  health: HealthChannel | null;
  metrics?: NodeMetricsHooks;
  /** what the plugins get besides the node's own (the embedded oauth2 tokens, the node's memory proxy-cache) */
  extraRuntime?: PluginRuntime;
}

/** A data plane running in this process (with its proxy workers, if any): what the CLI reports and stops. */
export interface RunningDataPlane {
  id: string;
  holder: ConfigHolder;
  status: StatusServer | null;
  /** the bus feed: its status is the node's `sync` in the status endpoints */
  feed: BusFeed;
  /** where the proxy listens (the ports every worker shares, with proxy workers) */
  listening: { host: string; port: number; tlsPort: number | null };
  /** the proxy, when it runs in this process (one worker) */
  proxy?: DataPlaneServer;
  metrics?: DataPlaneMetrics;
  /** the proxy workers, when there are several */
  workers?: WorkerPool;
  /** opens the access log file again (SIGUSR1) */
  reopenLog(): void;
  close(): Promise<void>;
}
