import { sql } from 'kysely';
import { compareEpochs, newEpoch } from '@gatehouse/core';
import type { Executor } from './entity-repository';

/** The database's cluster epoch (created by migration 0004, replaced when the database is found restored). */
export async function readEpoch(ex: Executor): Promise<string | null> {
  const { rows } = await sql<{ epoch: string }>`select epoch from cluster_epoch where id = 1`.execute(ex);
  return rows[0]?.epoch ?? null;
}

/**
 * Starts a new epoch, later than `after` (a head that must be overtaken), unless another control plane replica
 * already replaced `current`: the update only applies to the epoch it saw, so replicas never start two. Returns the
 * epoch now stored.
 */
export async function rotateEpoch(ex: Executor, current: string, after?: string | null): Promise<string> {
  const next = newEpoch(compareEpochs(after, current) > 0 ? after : current);
  await sql`update cluster_epoch set epoch = ${next}, updated_at = extract(epoch from now())::bigint
    where id = 1 and epoch = ${current}`.execute(ex);
  return (await readEpoch(ex)) ?? next;
}
