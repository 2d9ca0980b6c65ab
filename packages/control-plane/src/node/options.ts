import type { RouterFlavor } from '@gatehouse/core';
import type { ConfigBus, HealthChannel } from '@gatehouse/sync';
import type { Registry } from 'prom-client';
import type { AdminContext } from '../http/context';
import type { LogLevelControl } from '../operations/log-level-routes';
import type { EnforceMode } from '../rbac/enforce';

/** What a starting control plane logs through: one JSON line per event, in the CLI. */
export interface ControlPlaneLog {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The admin API's listener and what `GET /` says of the node: the same with a database and without. */
export interface AdminListenerOptions {
  /** `host:port` the admin API listens on (an IPv6 host in brackets) */
  adminListen: string;
  /** Kong's `admin_listen … ssl`: the admin API speaks HTTPS */
  adminSsl: boolean;
  /** the admin API's certificate and key files; null: the data directory's self-signed pair */
  adminCertificate: { cert: string; key: string } | null;
  /** the proxy listeners `GET /` reports (`start`); empty for a control plane alone */
  proxyListen: string[];
  /** Kong's role of the node: `traditional` (both planes in one process) or `control_plane` */
  kongRole: 'traditional' | 'control_plane';
  routerFlavor: RouterFlavor;
  /** origins whose browser pages may call the admin API */
  adminGuiOrigins: string[];
  /** `Host` names the admin API answers besides loopback ones */
  adminHosts: string[];
  /** the largest `POST /config` body, in bytes */
  configBodyLimit: number;
  /** the self-signed certificate's directory (and the embedded database's, the keyring's) */
  dataDir: string;
  /** the gateway's version (`gatehouse_version` of /status) */
  version: string;
  /** more fields for `GET /status` (the data plane's of `start`) */
  statusExtras?: () => Record<string, unknown>;
  /** Kong `configuration` keys for GET / */
  configuration?: Record<string, unknown>;
  /** runs once snapshots are published and before the admin API opens (`start`: the proxy listens first) */
  beforeAdminListens?: () => Promise<void>;
  log: ControlPlaneLog;
  bus: ConfigBus;
  /** the cluster secret snapshots are signed with */
  secret: string;
}

/** A control plane over a database (Postgres, or the embedded one in the data directory). */
export interface ControlPlaneStartOptions extends AdminListenerOptions {
  /** Postgres; null: the embedded database in `<dataDir>/db` */
  databaseUrl: string | null;
  /** the keyring's secret; null: the one kept in the data directory */
  keyringSecret: string | null;
  enforceRbac: EnforceMode;
  adminToken: string | null;
  /** the control plane's own status listener (`host:port`); null: none (`start` gives it to the data plane) */
  statusListen: string | null;
  extensions?: Array<(ctx: AdminContext) => void>;
  /** the node's metrics: where the control plane registers, and what `/metrics` serves */
  metrics?: { registry: Registry; exposed: Registry };
  health?: HealthChannel | null;
  /** the node's log level and the channel that carries changes (Kong's /debug/…/log-level) */
  logLevel?: LogLevelControl;
}

/** A node without a database: the declarative file, and with `admin` the database-less admin API. */
export interface DeclarativeStartOptions extends AdminListenerOptions {
  /** whether this node serves an admin API (a lone data plane does not) */
  admin: boolean;
  /** the declarative configuration file loaded at start; null: none */
  declarativeConfig: string | null;
  /** where a control plane over Redis keeps its document, resumes from and follows the others; null: nowhere */
  documents: { redisUrl: string; redisPrefix: string } | null;
}
