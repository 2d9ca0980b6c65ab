import { definePlugin } from '../contract';
import { ipRestrictionAccess } from './handler';
import { checkIpRestrictionConfig, ipRestrictionConfigSchema, type IpRestrictionConfig } from './schema';

/** Allows or denies by client address (IPv4, IPv6, CIDR blocks); may be scoped to a consumer, as in Kong. */
export const ipRestriction = definePlugin<IpRestrictionConfig, unknown>({
  name: 'ip-restriction',
  priority: 990,
  version: '3.9.0',
  configSchema: ipRestrictionConfigSchema,
  auth: false,
  noConsumer: false,
  checkConfig: checkIpRestrictionConfig,
  access: ipRestrictionAccess,
});
