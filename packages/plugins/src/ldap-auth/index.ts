import { definePlugin } from '../contract';
import { ldapAuthAuthenticate } from './handler';
import { checkLdapAuthConfig, ldapAuthConfigSchema, type LdapAuthConfig } from './schema';

/** Authenticates against an LDAP directory by a simple bind; identifies a credential (the LDAP username), no consumer. */
export const ldapAuth = definePlugin<LdapAuthConfig, undefined>({
  name: 'ldap-auth',
  priority: 1200,
  version: '3.9.0',
  configSchema: ldapAuthConfigSchema,
  auth: true,
  noConsumer: true,
  checkConfig: checkLdapAuthConfig,
  authenticate: ldapAuthAuthenticate,
});
