export * from './bus';
export * from './logger';
export * from './signing';
export * from './memory-bus';
export * from './redis-bus';
export * from './data-plane-identity';
export * from './data-plane-sync';
