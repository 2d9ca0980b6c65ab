import { sql, type RawBuilder } from 'kysely';
import { Errors } from '@gatehouse/core';
import type { EntityAccess, EntityAction } from '../service/entity-access';
import type { EntityKind } from '../service/entity-kind';
import type { Executor, StoredEntity } from '../store/entity-repository';
import { decideEntity, type RbacAction } from './decide';
import { entityGrants } from './entity-grants';
import type { Caller } from './service';
import { entityWorkspaces } from './store';

/** Kong's 403 for a caller refused an action. */
export const forbidden = (caller: Caller, action: RbacAction) => Errors.forbidden(`${caller.user.name}, you do not have permissions to ${action} this resource`);

/**
 * Where an entity lives for the entity check: roles in the request's workspace, a workspace in itself, users and
 * admins in none, every other entity where it was created (workspace_entities; no record = `default`).
 */
type Home = 'scope' | 'self' | 'none' | 'recorded';

function homeOf(kind: EntityKind): Home {
  switch (kind.def.name) {
    case 'rbac_roles':
      return 'scope';
    case 'workspaces':
      return 'self';
    case 'rbac_users':
    case 'admins':
      return 'none';
    default:
      return 'recorded';
  }
}

export interface AuthorizerPlace {
  /** the request's workspace */
  workspaceId: string;
  /** the `default` workspace, where entities without a record live */
  defaultWorkspaceId: string;
}

/**
 * The caller's entity rules (decide.ts) as the EntityService applies them (Kong §3.4): the row a read or write holds
 * is decided with decideEntity; a listing's page query keeps only the rows decideEntity would allow to read.
 */
export function entityAuthorizer(caller: Caller, place: AuthorizerPlace): EntityAccess {
  return {
    async authorize(kind: EntityKind, entity: StoredEntity, action: EntityAction, ex: Executor): Promise<void> {
      const workspaceId = await workspaceOfRow(homeOf(kind), entity.id, place, ex);
      if (!decideEntity(caller.entityRules, { entityId: entity.id, workspaceId, action })) throw forbidden(caller, action);
    },
    readable(kind: EntityKind): RawBuilder<boolean> {
      return readableCondition(caller, kind, place);
    },
  };
}

async function workspaceOfRow(home: Home, id: string, place: AuthorizerPlace, ex: Executor): Promise<string | null> {
  if (home === 'scope') return place.workspaceId;
  if (home === 'self') return id;
  if (home === 'none') return null;
  return (await entityWorkspaces(ex, [id])).get(id) ?? place.defaultWorkspaceId;
}

const oneOf = (value: RawBuilder<unknown>, set: string[]): RawBuilder<boolean> =>
  set.length === 0 ? sql<boolean>`false` : sql<boolean>`${value} = any(array[${sql.join(set)}]::text[])`;

/** entityGrants as a condition on the listed table's rows (its id and the workspace it lives in) */
function readableCondition(caller: Caller, kind: EntityKind, place: AuthorizerPlace): RawBuilder<boolean> {
  const table = kind.def.name;
  const { allowed, denied, all } = entityGrants(caller.entityRules, 'read');
  const id = sql`${sql.table(table)}.id::text`;
  const home = homeOf(kind);
  // a workspace is decided by its own rule alone (its id is the entity's); users and admins have no workspace
  const ws =
    home === 'scope'
      ? sql`${place.workspaceId}::text`
      : home === 'recorded'
        ? sql`coalesce((select we.ws_id::text from workspace_entities we where we.entity_id = ${sql.table(table)}.id), ${place.defaultWorkspaceId}::text)`
        : sql`null::text`;
  return sql<boolean>`(case
    when ${oneOf(id, denied)} then false
    when ${oneOf(id, allowed)} then not coalesce(${oneOf(ws, denied)}, false)
    when ${oneOf(ws, allowed)} then true
    when ${oneOf(ws, denied)} then false
    else ${sql.lit(all)} end)`;
}
