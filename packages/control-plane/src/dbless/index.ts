export * from './admin-app';
export * from './declarative-source';
export * from './declarative-state';
export { OperationUnsupported } from './read-routes';
export * from './document-store';
