import type { Request } from 'express';
import { Errors } from '@gatehouse/core';
import { param, sendList } from '../http/context';
import type { ResourceRegistry } from '../http/resources';
import { encodeOffset, parseListQuery } from '../service/paging';
import type { DeclarativeState } from './declarative-state';

type Tagged = {
  entity_name: string;
  entity_id: string;
  tag: string;
};

const byTagNameId = (a: Tagged, b: Tagged) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : a.entity_name < b.entity_name ? -1 : a.entity_name > b.entity_name ? 1 : a.entity_id < b.entity_id ? -1 : a.entity_id > b.entity_id ? 1 : 0);

/** every (entity_name, entity_id, tag) of a state, in the order Kong pages them; built on first use */
const tagIndexes = new WeakMap<DeclarativeState, Tagged[]>();

function tagsOf(state: DeclarativeState): Tagged[] {
  let all = tagIndexes.get(state);
  if (!all) {
    all = [];
    for (const [entity_name, list] of state.entities) {
      for (const e of list) if (Array.isArray(e.tags)) for (const tag of e.tags) all.push({ entity_name, entity_id: e.id, tag: String(tag) });
    }
    all.sort(byTagNameId);
    tagIndexes.set(state, all);
  }
  return all;
}

/** GET /tags and GET /tags/{tag} over the configuration in memory, paged as the database-backed ones. */
export function mountDeclarativeTagRoutes(resources: ResourceRegistry, state: () => DeclarativeState): void {
  const list = (req: Request, tag?: string) => {
    const q = parseListQuery(req.query, 3);
    const [afterTag, afterName, afterId] = (q.after as string[] | undefined) ?? [];
    const after = afterTag === undefined ? null : { tag: afterTag, entity_name: afterName!, entity_id: afterId! };
    const matching = tagsOf(state()).filter((t) => (tag === undefined || t.tag === tag) && (after === null || byTagNameId(t, after) > 0));
    const data = matching.slice(0, q.size);
    const last = data[data.length - 1];
    return { q, data, offset: matching.length > q.size && last ? encodeOffset([last.tag, last.entity_name, last.entity_id]) : null };
  };
  resources.add('/tags', {
    get: (req, res) => {
      const { q, data, offset } = list(req);
      sendList(req, res, q, { data, offset });
    },
  });
  resources.add('/tags/:tag', {
    get: (req, res) => {
      const tag = param(req, 'tag');
      if (tag === '') throw Errors.notFound();
      const { q, data, offset } = list(req, tag);
      sendList(req, res, q, { data, offset });
    },
  });
}
