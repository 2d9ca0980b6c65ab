export * from './apply';
export * from './diff';
export * from './document';
export * from './errors';
export * from './export';
export * from './ids';
export * from './kinds';
export * from './routes';
