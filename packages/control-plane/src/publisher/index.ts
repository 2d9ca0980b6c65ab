export * from './read-config';
export * from './snapshot-publisher';
