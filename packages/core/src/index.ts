export * from './errors';
export * from './entities';
export * from './snapshot';
export * from './hash';
export * from './schema';
export { z } from 'zod';
export * from './entities/route-regex';
export * from './epoch';
export * from './tls';
