export type { ConfigFeed, ConfigSink } from './config-feed';
export { DataPlaneNode, processReclaimer, type ConfigCounters, type ConfigForward, type DataPlaneNodeOptions, type ForwardedChange, type NodeLogger } from './data-plane-node';
export { BusFeed, type BusFeedOptions } from './bus-feed';
export { DataPlaneSync, type DataPlaneSyncOptions, type DataPlaneSyncStatus, type SnapshotSource } from './follow/data-plane-sync';
export { PublicationCheck } from './publication-check';
