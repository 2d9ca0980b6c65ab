import { MemoryBus, MemoryHealthChannel, RedisBus, RedisHealthChannel, type ConfigBus, type HealthChannel } from '@gatehouse/sync';
import type { Logger } from './logger';
import type { Settings } from './settings';

/** Redis when REDIS_URL is set, else the in-process bus (embedded mode only). */
export function openBus(settings: Settings, log: Logger): ConfigBus {
  if (servesFileAlone(settings)) return new MemoryBus();
  if (settings.redisUrl) return new RedisBus({ url: settings.redisUrl, prefix: settings.redisPrefix, logger: log });
  if (settings.role !== 'all') throw new Error(`REDIS_URL is required for the ${settings.role.replace('_', '-')} role`);
  return new MemoryBus();
}

/** Target health between the planes: Redis when REDIS_URL is set, else one in-process channel. */
export function openHealthChannel(settings: Settings, log: Logger): HealthChannel {
  if (settings.redisUrl) return new RedisHealthChannel({ url: settings.redisUrl, prefix: settings.redisPrefix, logger: log });
  return new MemoryHealthChannel();
}

/** a data plane given a declarative file (GATEHOUSE_DATABASE=off) serves it alone: no control plane, no Redis feed */
export function servesFileAlone(settings: Settings): boolean {
  return settings.role === 'data_plane' && settings.database === 'off' && settings.declarativeConfig !== null;
}
