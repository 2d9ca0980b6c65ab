export * from './definition';
export * from './fields';
export * from './consumers';
export * from './services';
export * from './routes';
export * from './plugins';
export * from './key-sets';
export * from './keys';
