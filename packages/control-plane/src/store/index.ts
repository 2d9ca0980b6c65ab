export * from './config-store';
export * from './entity-repository';
export * from './dangling-references';
export * from './cluster-epoch';
