import { definePlugin } from '../contract';
import { acls } from './entities';
import { aclIndex, type AclIndex } from './group-index';
import { aclAccess } from './handler';
import { aclConfigSchema, checkAclConfig, type AclConfig } from './schema';

/** Group-based access control; runs after authentication and may be scoped to a consumer. */
export const acl = definePlugin<AclConfig, AclIndex>({
  name: 'acl',
  priority: 950,
  version: '3.9.0',
  configSchema: aclConfigSchema,
  auth: false,
  noConsumer: false,
  entities: [acls],
  checkConfig: checkAclConfig,
  credentialIndex: aclIndex,
  access: aclAccess,
});
