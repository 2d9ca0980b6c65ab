export { WorkerPool, type RetiredCounts, type WorkerPoolOptions, type WorkerPoolLogger, type WorkerReport } from './worker-pool';
export { PrimaryLink, type PrimaryLinkHandlers, type WorkerCounters } from './proxy-worker';
export { deliverConfigMessage, PrimaryFeed, type PrimaryFeedLogger } from './primary-feed';
export { SharedCallClient, SharedCallServer, type SharedService } from './shared-calls';
export { remoteNodeStores, serveNodeStores, SHARED, type NodeStores } from './shared-stores';
export { nodeCounters, nodeMetricsSource } from './node-report';
export type { ConfigMessage, HealthMessage, LogLevelMessage, StartMessage, ToPrimary, ToWorker } from './messages';
