export * from './keyring';
export * from './seal';
export * from './validate-key';
export * from './kinds';
export * from './migrations';
export * from './routes';
export * from './snapshot-keys';
