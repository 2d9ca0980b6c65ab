export * from './contract';
export * from './bundled';
export * from './key-auth/schema';
export * from './key-auth/entities';
export { keyAuth } from './key-auth';
