import { hostname } from 'node:os';
import { join } from 'node:path';
import { bundledPlugins } from '@gatehouse/plugins';
import type { HealthChannel } from '@gatehouse/sync';
import { HealthReporter, type BalancerRegistry } from '../../balancer';
import type { ConfigHolder } from '../../config-holder';
import { BusFeed } from '../bus-feed';
import type { DataPlaneLog, DataPlaneStartOptions } from './options';

/** The bus feed of a data plane node: the disk cache in the data directory, and what its heartbeats say of it. */
export function busFeedOf(options: Pick<DataPlaneStartOptions, 'bus' | 'secret' | 'dataDir' | 'version' | 'labels' | 'log'>, id: string): BusFeed {
  const { log } = options;
  return new BusFeed({
    bus: options.bus,
    secret: options.secret,
    cacheFile: join(options.dataDir, 'data-plane-snapshot.json'),
    identity: { id, version: options.version, labels: options.labels, plugins: bundledPlugins.map((p) => p.name) },
    logger: log,
    onApplied: (snapshot, source) => log.info('configuration applied', { version: snapshot.version, hash: snapshot.hash, source }),
  });
}

/** The node's target health to the control plane, and manual health back from it; null without a health channel. */
export async function startHealthReporter(health: HealthChannel | null, balancers: BalancerRegistry, id: string, holder: ConfigHolder, log: Pick<DataPlaneLog, 'warn'>): Promise<HealthReporter | null> {
  if (!health) return null;
  const reporter = new HealthReporter({
    registry: balancers,
    channel: health,
    identity: { id, hostname: hostname() },
    configVersion: () => (holder.loaded ? holder.current.version : 0),
    log: { warn: log.warn },
  });
  await reporter.start();
  return reporter;
}
