import type { SnapshotConfig } from '@gatehouse/core';

export interface ConsumerGroups {
  groups: ReadonlySet<string>;
  /** `x-consumer-groups`: the groups joined by ", ", in snapshot order */
  header: string;
}

export interface AclIndex {
  /** consumer id → its groups; consumers without any ACL are absent */
  byConsumer: Map<string, ConsumerGroups>;
}

/** consumer id → groups, built once per snapshot. */
export function buildAclIndex(config: SnapshotConfig): AclIndex {
  const lists = new Map<string, string[]>();
  for (const row of config.credentials.acls ?? []) {
    if (!row.consumer || typeof row.group !== 'string') continue;
    let list = lists.get(row.consumer.id);
    if (!list) lists.set(row.consumer.id, (list = []));
    if (!list.includes(row.group)) list.push(row.group);
  }
  const byConsumer = new Map<string, ConsumerGroups>();
  for (const [consumerId, list] of lists) byConsumer.set(consumerId, { groups: new Set(list), header: list.join(', ') });
  return { byConsumer };
}
