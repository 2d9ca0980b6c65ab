export * from './kinds';
export * from './migrations';
export * from './routes';
export * from './snapshot-tls';
