export * from './errors';
export * from './entities';
export * from './snapshot';
export * from './hash';
export { z } from 'zod';
