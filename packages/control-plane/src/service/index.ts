export * from './entity-kind';
export * from './entity-service';
export * from './paging';
export * from './plugin-kind';
export * from './credential-kind';
export * from './references';
export * from './merge';
export * from './default-kinds';
