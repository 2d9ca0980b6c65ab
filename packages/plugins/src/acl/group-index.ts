import { declareIndex } from '../shared/credential-index';
import { acls } from './entities';

export interface ConsumerGroups {
  groups: ReadonlySet<string>;
  /** `x-consumer-groups`: the groups joined by ", ", in the order of the ACL rows' ids */
  header: string;
}

/**
 * ACL row id → row, and consumer id → groups (`byConsumer`, each group once, where it first appears; consumers without
 * any ACL are absent).
 */
export const aclIndex = declareIndex(acls, {
  keyedBy: { byId: 'id' },
  identifiedBy: 'group',
  entry: (_row, result) => ({ result }),
  summarize(entries): ConsumerGroups {
    const groups = new Set(entries.map((entry) => entry.result.credential.identifier));
    return { groups, header: [...groups].join(', ') };
  },
});

export type AclIndex = ReturnType<typeof aclIndex.compile>;
