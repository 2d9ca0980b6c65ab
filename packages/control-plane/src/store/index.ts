export * from './config-store';
export * from './entity-repository';
export * from './dangling-references';
