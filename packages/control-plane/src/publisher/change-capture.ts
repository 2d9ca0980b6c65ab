import { sql } from 'kysely';
import type { Executor } from '../store/entity-repository';

/**
 * Change capture for deltas: every snapshot table has statement-level triggers that list the ids a statement wrote
 * (inserts, updates, deletes, foreign-key cascades and bulk statements alike) in `config_change_log` with their
 * transaction id, and bumping the config version records which transaction made that version (`config_versions`).
 * So any control plane replica can read what changed between two versions from the database, whoever made the write.
 * Nothing is updated afterwards: the version bump, which serialises writers, only adds one row.
 *
 * The bump itself happens at commit: the capture triggers mark their transaction in `config_bump_pending` (one row
 * per transaction, whatever it wrote), and a deferred trigger on that mark bumps the version once as the transaction
 * commits and takes the mark away. So the row lock that orders versions is held only while committing, a write costs
 * no round trip of its own for it, and a bulk load costs one bump, not one per row. A transaction that bumped already
 * (`bumpVersion`) is not bumped again.
 */
export const CHANGES_TABLE = 'config_change_log';

/** changes of this many versions back stay in the log (a publisher further behind than half of it reads everything) */
export const CHANGES_KEPT_VERSIONS = 100_000;

/** the version bump records its transaction */
const TAG_FUNCTION = sql`
create or replace function gatehouse_record_config_version() returns trigger language plpgsql as $$
begin
  insert into config_versions (version, xid) values (new.version, txid_current()) on conflict (version) do update set xid = excluded.xid;
  return null;
end $$`;

/** the version is bumped once per transaction that logged changes, when it commits */
const BUMP_ON_COMMIT_FUNCTION = sql`
create or replace function gatehouse_bump_on_commit() returns trigger language plpgsql as $$
begin
  delete from config_bump_pending where xid = txid_current();
  if coalesce(current_setting('gatehouse.bumped_in', true), '') = txid_current()::text then
    return null;
  end if;
  perform set_config('gatehouse.bumped_in', txid_current()::text, true);
  update config_state set version = version + 1, updated_at = extract(epoch from now())::bigint where id = 1;
  return null;
end $$`;

/** marks the transaction as bumped: the deferred trigger leaves it alone (in the statement that bumps) */
export const MARK_BUMPED = sql`set_config('gatehouse.bumped_in', txid_current()::text, true)`;

function captureFunction(kind: 'new' | 'old' | 'both') {
  const body =
    kind === 'new'
      ? `insert into config_change_log (xid, entity, id) select txid_current(), tg_table_name, id::text from new_rows;`
      : kind === 'old'
        ? `insert into config_change_log (xid, entity, id) select txid_current(), tg_table_name, id::text from old_rows;`
        : `insert into config_change_log (xid, entity, id) select txid_current(), tg_table_name, id::text from new_rows
             union select txid_current(), tg_table_name, id::text from old_rows;`;
  return sql.raw(`
create or replace function gatehouse_capture_${kind}() returns trigger language plpgsql as $$
begin
  ${body}
  insert into config_bump_pending (xid) values (txid_current()) on conflict do nothing;
  return null;
end $$`);
}

/**
 * Installs the change table and the triggers on `tables` (those that exist), once; several control planes may call it
 * at once (an advisory lock orders them).
 */
export async function ensureChangeCapture(db: Executor, tables: readonly string[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(774411)`.execute(trx);
    await sql`create table if not exists config_change_log (xid bigint not null, entity text not null, id text not null)`.execute(trx);
    await sql`create index if not exists config_change_log_xid on config_change_log (xid)`.execute(trx);
    await sql`create table if not exists config_versions (version bigint primary key, xid bigint not null)`.execute(trx);
    await sql`create table if not exists config_bump_pending (xid bigint primary key)`.execute(trx);
    const { rows: installed } = await sql<{ table: string; trigger: string }>`
      select c.relname as "table", t.tgname as "trigger" from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where t.tgname like 'gatehouse_changes_%'`.execute(trx);
    const has = new Set(installed.map((r) => `${r.table}/${r.trigger}`));
    if (!has.has('config_state/gatehouse_changes_version')) {
      await TAG_FUNCTION.execute(trx);
      await sql`create trigger gatehouse_changes_version after update of version on config_state for each row execute function gatehouse_record_config_version()`.execute(trx);
    }
    await BUMP_ON_COMMIT_FUNCTION.execute(trx);
    if (!has.has('config_bump_pending/gatehouse_changes_bump')) {
      await sql`create constraint trigger gatehouse_changes_bump after insert on config_bump_pending deferrable initially deferred for each row execute function gatehouse_bump_on_commit()`.execute(trx);
    }
    for (const kind of ['new', 'old', 'both'] as const) await captureFunction(kind).execute(trx);
    const { rows: existing } = await sql<{ name: string }>`
      select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(trx);
    const present = new Set(existing.map((r) => r.name));
    for (const table of tables) {
      if (!present.has(table)) continue;
      const t = sql.id(table);
      if (!has.has(`${table}/gatehouse_changes_ins`)) {
        await sql`create trigger gatehouse_changes_ins after insert on ${t} referencing new table as new_rows for each statement execute function gatehouse_capture_new()`.execute(trx);
      }
      if (!has.has(`${table}/gatehouse_changes_upd`)) {
        await sql`create trigger gatehouse_changes_upd after update on ${t} referencing old table as old_rows new table as new_rows for each statement execute function gatehouse_capture_both()`.execute(trx);
      }
      if (!has.has(`${table}/gatehouse_changes_del`)) {
        await sql`create trigger gatehouse_changes_del after delete on ${t} referencing old table as old_rows for each statement execute function gatehouse_capture_old()`.execute(trx);
      }
    }
  });
}

/** The ids written in versions (`after`, `upTo`], by table; null when there are more than `limit`. */
export async function readChanges(trx: Executor, after: number, upTo: number, limit: number): Promise<Map<string, string[]> | null> {
  // `= any(array(…))` keeps both lookups on their indexes whatever the table statistics say (a join planned on stale
  // statistics scans the whole log)
  const { rows } = await sql<{ entity: string; id: string }>`
    select distinct entity, id from config_change_log
    where xid = any(array(select xid from config_versions where version > ${after} and version <= ${upTo})) limit ${limit + 1}`.execute(trx);
  if (rows.length > limit) return null;
  const byTable = new Map<string, string[]>();
  for (const { entity, id } of rows) {
    let ids = byTable.get(entity);
    if (!ids) byTable.set(entity, (ids = []));
    ids.push(id);
  }
  return byTable;
}

/** the stored entities of `table` among `ids` */
export async function readRows(trx: Executor, table: string, ids: readonly string[]): Promise<Array<Record<string, unknown> & { id: string }>> {
  if (ids.length === 0) return [];
  const rows = await trx.selectFrom(table).select('entity').where('id', 'in', ids as string[]).execute();
  return rows.map((r) => r.entity as Record<string, unknown> & { id: string });
}

/** Forgets changes of versions up to `upTo` (kept: what a lagging replica still reads). */
export async function pruneChanges(db: Executor, upTo: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`delete from config_change_log c using config_versions v where c.xid = v.xid and v.version <= ${upTo}`.execute(trx);
    await sql`delete from config_versions where version <= ${upTo}`.execute(trx);
  });
}
