export * from './open-database';
export * from './migrations';
export * from './entity-tables';
export * from './sql-errors';
export * from './unreachable';
export * from './tables';
