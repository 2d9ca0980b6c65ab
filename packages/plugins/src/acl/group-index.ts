import { declareIndex } from '../shared/credential-index';
import { acls } from './entities';

export interface ConsumerGroups {
  groups: ReadonlySet<string>;
  /** `x-consumer-groups`: the groups joined by ", ", in the order of the ACL rows' ids */
  header: string;
}

/** One ACL row as the index keeps it: a group of a consumer. */
interface AclEntry {
  group: string;
  result: { credential: { id: string; identifier: string; consumerId: string } };
}

interface Groups {
  /** consumer id → its groups; consumers without any ACL are absent */
  byConsumer: Map<string, ConsumerGroups>;
  /** consumer id → its ACL rows in id order, what `byConsumer` is made from */
  rowsByConsumer: Map<string, AclEntry[]>;
}

/** Puts a consumer's groups again from its rows: each group once, where it first appears. */
function regroup(index: Groups, consumerId: string, rows: AclEntry[]): void {
  if (rows.length === 0) {
    index.rowsByConsumer.delete(consumerId);
    index.byConsumer.delete(consumerId);
    return;
  }
  const groups = new Set(rows.map((r) => r.group));
  index.rowsByConsumer.set(consumerId, rows);
  index.byConsumer.set(consumerId, { groups, header: [...groups].join(', ') });
}

/** ACL row id → row, and consumer id → groups. */
export const aclIndex = declareIndex(acls, {
  keyedBy: { byId: 'id' },
  entry: (row, consumer): AclEntry | null =>
    typeof row.group !== 'string' ? null : { group: row.group, result: { credential: { id: row.id, identifier: row.group, consumerId: consumer.id } } },
  extra: (): Groups => ({ byConsumer: new Map(), rowsByConsumer: new Map() }),
  added(index, entry) {
    const { id, consumerId } = entry.result.credential;
    const rows = index.rowsByConsumer.get(consumerId) ?? [];
    let at = rows.length;
    while (at > 0 && rows[at - 1]!.result.credential.id > id) at--;
    rows.splice(at, 0, entry);
    regroup(index, consumerId, rows);
  },
  removed(index, entry) {
    const { consumerId } = entry.result.credential;
    regroup(index, consumerId, (index.rowsByConsumer.get(consumerId) ?? []).filter((r) => r !== entry));
  },
});

export type AclIndex = ReturnType<typeof aclIndex.compile>;
