export type { AdminListenerOptions, ControlPlaneLog, ControlPlaneStartOptions, DeclarativeStartOptions } from './options';
export { startControlPlane, type ControlPlaneNode } from './start-control-plane';
export { startDeclarative, type DeclarativeNode } from './start-declarative';
