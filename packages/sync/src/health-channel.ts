import type { BusSubscription } from './bus';

/** Kong's target health values. */
export type TargetHealth = 'HEALTHY' | 'UNHEALTHY' | 'HEALTHCHECKS_OFF' | 'DNS_ERROR';
export type BalancerHealth = 'HEALTHY' | 'UNHEALTHY' | 'HEALTHCHECKS_OFF';

export interface AddressHealthReport {
  ip: string;
  port: number;
  health: TargetHealth;
  weight: number;
}

export interface TargetHealthReport {
  /** `host:port` as stored */
  target: string;
  health: TargetHealth;
  addresses: AddressHealthReport[];
}

export interface UpstreamHealthReport {
  health: BalancerHealth;
  targets: TargetHealthReport[];
}

/** One data plane's view of every upstream it balances. */
export interface DataPlaneHealthReport {
  data_plane_id: string;
  hostname: string;
  /** epoch seconds of the report */
  at: number;
  config_version: number;
  /** upstream id → health */
  upstreams: Record<string, UpstreamHealthReport>;
}

/** `PUT /upstreams/{u}/targets/{t}[/{address}]/healthy|unhealthy`, sent to every data plane. */
export interface ManualHealthCommand {
  upstream_id: string;
  /** `host:port` */
  target: string;
  /** `ip:port` of one resolved address; absent = every address of the target */
  address?: string;
  healthy: boolean;
}

/**
 * Target health between the planes, beside the config bus: data planes report what their checks see, the control
 * plane reads the reports of live data planes and broadcasts manual health changes. Redis in a cluster, in memory
 * in embedded mode.
 */
export interface HealthChannel {
  report(report: DataPlaneHealthReport): Promise<void>;
  /** reports younger than `maxAgeSeconds` (live data planes), most recent first */
  list(maxAgeSeconds: number): Promise<DataPlaneHealthReport[]>;
  publishManual(command: ManualHealthCommand): Promise<void>;
  subscribeManual(handler: (command: ManualHealthCommand) => void): Promise<BusSubscription>;
  close(): Promise<void>;
}

export function parseManualHealthCommand(text: string): ManualHealthCommand | null {
  try {
    const value = JSON.parse(text) as Partial<ManualHealthCommand> | null;
    if (!value || typeof value.upstream_id !== 'string' || typeof value.target !== 'string' || typeof value.healthy !== 'boolean') return null;
    const command: ManualHealthCommand = { upstream_id: value.upstream_id, target: value.target, healthy: value.healthy };
    if (typeof value.address === 'string') command.address = value.address;
    return command;
  } catch {
    return null;
  }
}
