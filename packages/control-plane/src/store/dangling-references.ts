import { sql } from 'kysely';
import type { Executor } from './entity-repository';

export interface DanglingReference {
  entity: 'plugins';
  id: string;
  name: string;
  field: 'config.anonymous';
  value: string;
  message: string;
}

/**
 * Plugins whose `config.anonymous` names no consumer (by id or username). Such a value is accepted when set (the
 * interface document says it is not checked) and answers 500 at request time, so it is reported here instead.
 */
export async function findDanglingAnonymous(ex: Executor): Promise<DanglingReference[]> {
  const { rows } = await sql<{ id: string; name: string; value: string }>`
    select p.id::text as id, p.name, p.entity -> 'config' ->> 'anonymous' as value
    from plugins p
    where p.entity -> 'config' ->> 'anonymous' is not null
      and not exists (
        select 1 from consumers c
        where c.id::text = p.entity -> 'config' ->> 'anonymous' or c.username = p.entity -> 'config' ->> 'anonymous'
      )
    order by p.id`.execute(ex);
  return rows.map((r) => ({
    entity: 'plugins',
    id: r.id,
    name: r.name,
    field: 'config.anonymous',
    value: r.value,
    message: `plugin '${r.name}' (${r.id}): config.anonymous '${r.value}' is not an existing consumer; requests falling back to it will fail`,
  }));
}
