import { z, baseFields, foreignRef, tags } from '@gatehouse/core';
import type { CredentialEntity } from '../contract';

export const aclSchema = z
  .object({
    ...baseFields,
    consumer: foreignRef(),
    group: z.string().min(1),
    tags: tags(),
  })
  .strict();

/**
 * A consumer's membership of one group. `group` is unique only within a consumer, so as an endpoint key it names an
 * ACL under its consumer (`/consumers/{c}/acls/{group}`, looked up by consumer and group); the flat `/acls/{x}` is
 * meant to be read by id.
 */
export const acls: CredentialEntity = {
  name: 'acls',
  adminPath: 'acls',
  consumerPath: 'acls',
  schema: aclSchema,
  endpointKey: 'group',
  uniques: [],
  compositeUniques: [['consumer', 'group']],
  foreignKeys: [{ field: 'consumer', entity: 'consumers', onDelete: 'cascade', required: true }],
  updatedAt: false,
};
