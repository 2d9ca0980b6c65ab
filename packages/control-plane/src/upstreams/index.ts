export { upstreamKind, targetKind } from './kinds';
export { mountUpstreamRoutes, LIVE_HEALTH_REPORT_SECONDS, type UpstreamRoutesOptions } from './routes';
export { healthchecksEnabled, targetHealthView, balancerHealthView, worstHealth } from './health-view';
