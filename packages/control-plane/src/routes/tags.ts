import { sql } from 'kysely';
import { Errors } from '@gatehouse/core';
import { param, sendList, type AdminContext } from '../http/context';
import { encodeOffset, parseListQuery } from '../service/paging';

/**
 * GET /tags and GET /tags/{tag}: every (entity_name, entity_id, tag) of the entities that carry tags, ordered by
 * tag, entity name and id, in pages like any collection.
 */
export function mountTagRoutes(ctx: AdminContext): void {
  const { resources, entities, store } = ctx;

  const list = async (query: Record<string, unknown>, tag?: string) => {
    const q = parseListQuery(query, 3);
    const tables = entities
      .allKinds()
      .filter((k) => 'tags' in (k.def.schema.shape as Record<string, unknown>))
      .map((k) => k.def.name);
    // Postgres text cannot hold NUL: no stored tag contains one
    const impossible = [tag, ...((q.after as string[] | undefined) ?? [])].some((v) => typeof v === 'string' && v.includes('\u0000'));
    if (tables.length === 0 || impossible) return { q, data: [], offset: null };
    const union = sql.join(
      tables.map(
        (t) =>
          sql`select ${sql.lit(t)}::text as entity_name, id::text as entity_id, jsonb_array_elements_text(entity -> 'tags') as tag
              from ${sql.table(t)} where jsonb_typeof(entity -> 'tags') = 'array'`,
      ),
      sql` union all `,
    );
    const conditions = [sql`true`];
    if (tag !== undefined) conditions.push(sql`tag = ${tag}`);
    if (q.after) {
      const [afterTag, afterName, afterId] = q.after as string[];
      conditions.push(sql`(tag, entity_name, entity_id) > (${afterTag}, ${afterName}, ${afterId})`);
    }
    const { rows } = await sql<{ entity_name: string; entity_id: string; tag: string }>`
      select entity_name, entity_id, tag from (${union}) as tagged
      where ${sql.join(conditions, sql` and `)}
      order by tag, entity_name, entity_id
      limit ${q.size + 1}`.execute(store.db);
    const more = rows.length > q.size;
    const data = rows.slice(0, q.size).map((r) => ({ entity_name: r.entity_name, entity_id: r.entity_id, tag: r.tag }));
    const last = data[data.length - 1];
    return { q, data, offset: more && last ? encodeOffset([last.tag, last.entity_name, last.entity_id]) : null };
  };

  resources.add('/tags', {
    get: async (req, res) => {
      const { q, data, offset } = await list(req.query);
      sendList(req, res, q, { data, offset });
    },
  });
  resources.add('/tags/:tag', {
    get: async (req, res) => {
      const tag = param(req, 'tag');
      if (tag === '') throw Errors.notFound();
      const { q, data, offset } = await list(req.query, tag);
      sendList(req, res, q, { data, offset });
    },
  });
}
