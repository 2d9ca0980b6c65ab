export * from './settings';
export * from './start-node';
export * from './control-plane-options';
export * from './data-plane-options';
export * from './bus';
export * from './logger';
export { GATEHOUSE_VERSION } from './version';
