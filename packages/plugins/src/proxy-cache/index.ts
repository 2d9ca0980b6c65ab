import { definePlugin } from '../contract';
import { proxyCacheAccess, proxyCacheResponse, proxyCacheStores } from './handler';
import { proxyCacheConfigSchema, type ProxyCacheConfig } from './schema';

/** Caches upstream responses: `memory` (per data plane, LRU bounded by bytes) or `redis` (shared by every data plane). */
export const proxyCache = definePlugin<ProxyCacheConfig, unknown>({
  name: 'proxy-cache',
  priority: 100,
  version: '3.9.0',
  configSchema: proxyCacheConfigSchema,
  auth: false,
  noConsumer: false,
  init: proxyCacheStores.init,
  access: proxyCacheAccess,
  response: proxyCacheResponse,
});
