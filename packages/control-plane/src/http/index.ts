export * from './app';
export * from './context';
export * from './resources';
export * from './server';
export * from './errors';
export * from './cors';
export * from './browser-guard';
export * from './private-material';
