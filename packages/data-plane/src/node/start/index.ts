export type { DataPlaneLog, DataPlaneSettings, DataPlaneStartOptions, NodeMetricsHooks, ProxyListen, ProxySettings, RunningDataPlane, RuntimeLogLevel } from './options';
export { startDataPlane } from './start-data-plane';
export { runProxyWorker } from './proxy-worker';
export { PROXY_WORKER_ENV, WORKER_SHARED_TOKENS_ENV } from './worker-env';
