import type { AppliedChange, SnapshotConfig } from '@gatehouse/core';

export interface ConsumerGroups {
  groups: ReadonlySet<string>;
  /** `x-consumer-groups`: the groups joined by ", ", in snapshot order */
  header: string;
}

/** One ACL row as the index keeps it. */
interface AclRow {
  id: string;
  group: string;
}

export interface AclIndex {
  /** consumer id → its groups; consumers without any ACL are absent */
  byConsumer: Map<string, ConsumerGroups>;
  /** consumer id → its ACL rows in snapshot order (by id), what `byConsumer` is made from */
  rowsByConsumer: Map<string, AclRow[]>;
}

export const ACL_INDEX_SECTIONS = ['credentials/acls'] as const;

/** A consumer's groups from its rows: each group once, where it first appears. */
function groupsOf(rows: readonly AclRow[]): ConsumerGroups {
  const groups = new Set(rows.map((r) => r.group));
  return { groups, header: [...groups].join(', ') };
}

/** consumer id → groups, built once per snapshot. */
export function buildAclIndex(config: SnapshotConfig): AclIndex {
  const rowsByConsumer = new Map<string, AclRow[]>();
  for (const row of config.credentials.acls ?? []) {
    if (!row.consumer || typeof row.group !== 'string') continue;
    let list = rowsByConsumer.get(row.consumer.id);
    if (!list) rowsByConsumer.set(row.consumer.id, (list = []));
    list.push({ id: row.id, group: row.group });
  }
  const byConsumer = new Map<string, ConsumerGroups>();
  for (const [consumerId, list] of rowsByConsumer) byConsumer.set(consumerId, groupsOf(list));
  return { byConsumer, rowsByConsumer };
}

function consumerIdOf(row: Record<string, unknown>): string | null {
  const id = (row.consumer as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : null;
}

/**
 * Follows a delta: a changed ACL row leaves its consumer's list and joins the list of the consumer it names now, at
 * its place by id; only the consumers whose lists changed get their groups again. ACL rows go with their consumer by
 * the foreign key's cascade, and the delta says so, so consumer rows are not read (as `buildAclIndex` does not).
 */
export function updateAclIndex(index: AclIndex, changes: readonly AppliedChange[]): boolean {
  const changed = new Set<string>();
  for (const change of changes) {
    if (change.key !== 'credentials/acls') continue;
    const before = change.before ? consumerIdOf(change.before) : null;
    if (before !== null) {
      const list = index.rowsByConsumer.get(before);
      const at = list ? list.findIndex((r) => r.id === change.id) : -1;
      if (list && at >= 0) {
        list.splice(at, 1);
        changed.add(before);
      }
    }
    const after = change.after;
    const consumerId = after ? consumerIdOf(after) : null;
    if (!after || consumerId === null || typeof after.group !== 'string') continue;
    let list = index.rowsByConsumer.get(consumerId);
    if (!list) index.rowsByConsumer.set(consumerId, (list = []));
    let at = list.length;
    while (at > 0 && list[at - 1]!.id > change.id) at--;
    list.splice(at, 0, { id: change.id, group: after.group });
    changed.add(consumerId);
  }
  for (const consumerId of changed) {
    const list = index.rowsByConsumer.get(consumerId);
    if (list && list.length > 0) index.byConsumer.set(consumerId, groupsOf(list));
    else {
      index.rowsByConsumer.delete(consumerId);
      index.byConsumer.delete(consumerId);
    }
  }
  return true;
}
