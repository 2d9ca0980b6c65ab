export * from './settings';
export * from './control-plane-node';
export * from './data-plane-node';
export * from './bus';
export * from './logger';
export { GATEHOUSE_VERSION } from './version';
