import { definePlugin } from '../contract';
import { acmeAccess } from './handler';
import { acmeIndex } from './on-demand';
import { acmeConfigSchema, checkAcmeConfig, type AcmeConfig } from './schema';

export { processChallenges, redisChallenges, type AcmeChallengeStore } from './challenges';
export { acmeIndex, onDemandCertificates, processOrders, redisOrders, type AcmeOrderChannel } from './on-demand';
export { acmeConfigSchema, coversDomain, type AcmeConfig } from './schema';

/**
 * ACME certificates (Kong's priority 1705, before authentication, so challenges are never refused). The data planes
 * answer HTTP-01 challenges; the control plane orders (`POST /acme`) and renews (`PATCH /acme`) and stores each
 * certificate as a `certificates` entity with its SNI, which every data plane serves; a handshake for a covered name
 * without a certificate has the control plane order one (Kong's `certificate` phase).
 */
export const acme = definePlugin<AcmeConfig, unknown>({
  name: 'acme',
  priority: 1705,
  version: '3.9.0',
  configSchema: acmeConfigSchema,
  auth: false,
  noConsumer: true,
  checkConfig: checkAcmeConfig,
  access: acmeAccess,
  // the configuration a data plane reads when a TLS handshake for one of its domains has no certificate
  compile: acmeIndex,
  indexSections: ['plugins'],
});
