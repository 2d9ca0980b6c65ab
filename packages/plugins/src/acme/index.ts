import { definePlugin } from '../contract';
import { acmeAccess } from './handler';
import { acmeConfigSchema, checkAcmeConfig, type AcmeConfig } from './schema';

export { processChallenges, redisChallenges, type AcmeChallengeStore } from './challenges';
export { acmeConfigSchema, coversDomain, type AcmeConfig } from './schema';

/**
 * ACME certificates (Kong's priority 1705, before authentication, so challenges are never refused). The data planes
 * answer HTTP-01 challenges; the control plane orders (`POST /acme`) and renews (`PATCH /acme`) and stores each
 * certificate as a `certificates` entity with its SNI, which every data plane serves.
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
});
