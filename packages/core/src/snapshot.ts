import type { SignedDelta } from './config-delta';
import type { Consumer, Plugin, Route, Service, Target, Upstream } from './entities';

/** A key as data planes receive it: private material already decrypted by the control plane. */
export type SnapshotKey = {
  id: string;
  name: string | null;
  kid: string;
  set: { id: string } | null;
  jwk: string | null;
  pem: { public_key: string | null; private_key: string | null } | null;
};

/** A certificate as data planes receive it: private keys decrypted; `cert`/`key` may still be vault references. */
export type SnapshotCertificate = {
  id: string;
  cert: string;
  key: string;
  cert_alt: string | null;
  key_alt: string | null;
};

export type SnapshotSni = {
  id: string;
  name: string;
  certificate: { id: string };
};

export type SnapshotCaCertificate = {
  id: string;
  cert: string;
};

export type SnapshotVault = {
  id: string;
  prefix: string;
  name: string;
  config: Record<string, unknown> | null;
};

export type SnapshotKeySet = {
  id: string;
  name: string | null;
};

/**
 * Everything a data plane needs, in a deterministic order (each list sorted by id).
 * `credentials` is keyed by the credential entity's name (keyauth_credentials, basicauth_credentials, …).
 */
export type SnapshotConfig = {
  services: Service[];
  routes: Route[];
  consumers: Consumer[];
  plugins: Plugin[];
  credentials: Record<string, Array<Record<string, unknown> & { id: string; consumer: { id: string } | null }>>;
  key_sets: SnapshotKeySet[];
  keys: SnapshotKey[];
  /** balancers: upstreams by id, and their targets (a service whose host is an upstream's name is balanced) */
  upstreams: Upstream[];
  targets: Target[];
  /** TLS sections; absent in snapshots made before they existed */
  certificates?: SnapshotCertificate[];
  snis?: SnapshotSni[];
  ca_certificates?: SnapshotCaCertificate[];
  vaults?: SnapshotVault[];
};

export const SNAPSHOT_SECTIONS = [
  'services',
  'routes',
  'consumers',
  'plugins',
  'credentials',
  'key_sets',
  'keys',
  'upstreams',
  'targets',
  'certificates',
  'snis',
  'ca_certificates',
  'vaults',
] as const;
export type SnapshotSection = (typeof SNAPSHOT_SECTIONS)[number];

export interface Snapshot {
  format: 1;
  /** monotonic config version from the control plane's database */
  version: number;
  /** epoch seconds */
  created_at: number;
  /** 32 hex chars, over all sections; equal hash = same config */
  hash: string;
  hashes: Record<SnapshotSection, string>;
  config: SnapshotConfig;
  /** the cluster epoch (see epoch.ts): which incarnation of the control plane's database this version belongs to */
  epoch?: string;
}

/** What travels through Redis / the bus and the disk cache: the snapshot JSON, gzipped, with its HMAC. */
export interface SignedSnapshot {
  version: number;
  hash: string;
  /** `aes-256-gcm`: base64 of iv ‖ AES-256-GCM(gzip(JSON(snapshot))) ‖ tag; absent (earlier releases): base64 of gzip(JSON(snapshot)) */
  cipher?: string;
  payload: string;
  /** hex HMAC-SHA256 of `payload` under the cluster secret */
  signature: string;
  /** the payload's epoch, repeated so it can be compared before decoding (verification checks they agree) */
  epoch?: string;
}

/** The announcement published after each write. */
export interface SnapshotAnnouncement {
  version: number;
  hash: string;
  /** the snapshot's cluster epoch */
  epoch?: string;
  /** when the version was published as a delta: the signed delta itself, so a data plane needs no fetch to follow */
  delta?: SignedDelta;
}

export const EMPTY_CONFIG_HASH = '00000000000000000000000000000000';

export function emptyConfig(): SnapshotConfig {
  return {
    services: [],
    routes: [],
    consumers: [],
    plugins: [],
    credentials: {},
    key_sets: [],
    keys: [],
    upstreams: [],
    targets: [],
    certificates: [],
    snis: [],
    ca_certificates: [],
    vaults: [],
  };
}
