export * from './database';
export * from './ports';
export * from './processes';
export * from './redis';
export * from './services';
export * from './echo-upstream';
export * from './snapshot-builder';
export * from './ldap';
