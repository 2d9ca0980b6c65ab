/**
 * Workspaces, RBAC users, roles and admins as entity kinds of the shared framework: their definitions live in
 * `@gatehouse/core` (entities/rbac.ts); what differs from the generic path is in these hooks: the token hashed (and
 * generated on a PATCH that omits it), a user's default role, the self-modification guards, what a workspace
 * rename carries along and what keeps a workspace from being deleted.
 */
import { randomUUID } from 'node:crypto';
import { admins, Errors, rbacRoles, rbacUsers, rowOf, schemaViolation, workspaces, type RbacRole, type RbacUser, type Workspace } from '@gatehouse/core';
import type { EntityKind, WriteContext } from '../service/entity-kind';
import type { EntityRepository, Executor, StoredEntity } from '../store/entity-repository';
import { DEFAULT_WORKSPACE } from './decide';
import { scopeOfLocals } from './request-scope';
import * as store from './store';
import { generateToken, hashToken, tokenIdent, verifyToken } from './token';

export interface RbacKindDeps {
  /** the user and role tables */
  users: EntityRepository;
  roles: EntityRepository;
  /** whether a first path segment is an admin collection: such names cannot be workspace names */
  isAdminRoot(segment: string): boolean;
  /** tables of the entities a workspace may hold */
  configTables(): string[];
}

const callerIn = (ctx: WriteContext) => scopeOfLocals(ctx.input?.locals)?.caller ?? null;

/** the request's workspace, or `default` for writes that come from no request */
async function workspaceIn(ctx: WriteContext): Promise<Workspace> {
  const scoped = scopeOfLocals(ctx.input?.locals)?.workspace;
  if (scoped) return scoped;
  const ws = await store.findWorkspace(ctx.trx, DEFAULT_WORKSPACE);
  if (!ws) throw new Error('the default workspace is missing: database not migrated');
  return ws;
}

/** Refuses a token another user already has (found through the ident, confirmed with bcrypt). */
export async function assertTokenFree(ex: Executor, token: string, exceptUserId?: string): Promise<void> {
  for (const other of await store.usersByIdent(ex, tokenIdent(token), false)) {
    if (other.id !== exceptUserId && (await verifyToken(token, other.user_token))) {
      throw schemaViolation({ user_token: 'a user with this token already exists' });
    }
  }
}

/**
 * Links a user to its default role, named after it, in the given workspace. An existing role of that name is
 * reused (so a user named `super-admin` holds the super-admin role), as Kong does.
 */
export async function attachDefaultRole(deps: Pick<RbacKindDeps, 'roles'>, trx: Executor, user: { id: string; name: string }, wsId: string): Promise<void> {
  let role = await store.findRole(trx, wsId, user.name);
  if (!role) {
    const now = store.nowSeconds();
    role = { id: randomUUID(), created_at: now, updated_at: now, workspace: { id: wsId }, name: user.name, comment: `Default user role generated for ${user.name}`, is_default: true };
    await deps.roles.insert(trx, role);
  }
  await store.linkUserRole(trx, user.id, role.id);
}

/** A user's default roles nobody else holds go with it. */
async function defaultRolesOf(trx: Executor, userId: string): Promise<RbacRole[]> {
  return (await store.rolesOfUser(trx, userId)).filter((r) => r.is_default);
}

async function dropUnheldRoles(deps: RbacKindDeps, trx: Executor, roles: RbacRole[]): Promise<void> {
  for (const role of roles) if ((await store.roleHolderCount(trx, role.id)) === 0) await deps.roles.delete(trx, role.id);
}

/** A new user's stored form: the token hashed, its ident beside it. */
export async function userWithToken(user: Record<string, unknown>, token: string): Promise<Record<string, unknown>> {
  return { ...user, user_token: await hashToken(token), user_token_ident: tokenIdent(token) };
}

export function workspaceKind(deps: RbacKindDeps): EntityKind {
  return {
    outsideConfiguration: true,
    def: workspaces,
    validate: async (entity, ctx) => {
      const previous = ctx.previous as Workspace | null;
      const name = String(entity.name);
      if (previous?.name === DEFAULT_WORKSPACE && name !== DEFAULT_WORKSPACE) throw Errors.badRequest('Cannot rename default workspace');
      if (previous?.name !== name && deps.isAdminRoot(name.toLowerCase())) throw schemaViolation({ name: `'${name}' is a reserved name` });
    },
    afterWrite: async (entity, ctx) => {
      const previous = ctx.previous as Workspace | null;
      if (previous && previous.name !== entity.name) await store.renameWorkspaceInPermissions(ctx.trx, previous.name, String(entity.name));
    },
    beforeDelete: async (entity, ctx) => {
      if (entity.name === DEFAULT_WORKSPACE) throw Errors.badRequest('Cannot delete default workspace');
      if ((await store.workspaceContentCount(ctx.trx, entity.id, deps.configTables())) > 0) throw Errors.badRequest('Workspace is not empty');
    },
  };
}

/**
 * RBAC users: `user_token` is stored as a bcrypt digest (cost 9) and only that digest is ever returned. A PATCH
 * without `user_token` generates a new token, shown once in `generated_user_token`. Users owned by admins are
 * managed through /admins and not found here.
 */
export function userKind(deps: RbacKindDeps): EntityKind {
  return {
    outsideConfiguration: true,
    def: rbacUsers,
    hides: (entity, ex) => store.isAdminUser(ex, entity.id),
    listExcludes: { notReferencedBy: { table: admins.name, column: 'rbac_user_id' } },
    notFound: (ref) => Errors.notFoundNamed(`No RBAC user by name or id ${ref}`),
    deleteMissingIsNotFound: true,
    prepare: async (entity, ctx) => {
      const previous = ctx.previous as RbacUser | null;
      const given = ctx.input ? ctx.input.body.user_token : entity.user_token;
      let token = String(entity.user_token);
      if (previous && given === undefined) {
        token = generateToken();
        if (ctx.reply) ctx.reply.generated_user_token = token;
      } else if (previous && (token === previous.user_token || (await verifyToken(token, previous.user_token)))) {
        return { ...entity, user_token: previous.user_token, user_token_ident: previous.user_token_ident };
      }
      await assertTokenFree(ctx.trx, token, previous?.id);
      return userWithToken(entity, token);
    },
    afterWrite: async (entity, ctx) => {
      if (!ctx.previous) await attachDefaultRole(deps, ctx.trx, rowOf(rbacUsers, entity), (await workspaceIn(ctx)).id);
    },
    beforeDelete: async (entity, ctx) => {
      if (callerIn(ctx)?.user.id === entity.id) throw Errors.forbidden('the admin should not delete themselves');
      ctx.carry = { roles: await defaultRolesOf(ctx.trx, entity.id) };
    },
    afterDelete: async (_entity, ctx) => dropUnheldRoles(deps, ctx.trx, (ctx.carry?.roles ?? []) as RbacRole[]),
  };
}

/** RBAC roles: each lives in the workspace of the request that made it; a user's default role stays one. */
export function roleKind(): EntityKind {
  return {
    outsideConfiguration: true,
    def: rbacRoles,
    keyUniqueInScope: true,
    listExcludes: { jsonEquals: { is_default: false } },
    present: (entity) => {
      const { workspace: _ws, ...shown } = entity;
      return shown;
    },
    validate: async (entity, ctx) => {
      const previous = ctx.previous as RbacRole | null;
      if (previous && ctx.input?.body.is_default !== undefined && entity.is_default !== previous.is_default) {
        throw schemaViolation({ is_default: 'immutable field cannot be updated' });
      }
    },
    prepare: (entity, ctx) => (ctx.previous ? { ...entity, is_default: ctx.previous.is_default } : entity),
    beforeDelete: async (entity, ctx) => {
      if (callerIn(ctx)?.roles.some((r) => r.id === entity.id)) throw Errors.forbidden('the admin should not delete their own roles');
    },
  };
}

/** Admins: each owns one RBAC user named after it, made with it (with a random token nobody is told). */
export function adminKind(deps: RbacKindDeps): EntityKind {
  return {
    outsideConfiguration: true,
    def: admins,
    prepare: async (entity, ctx) => {
      if (ctx.previous) return { ...entity, rbac_user: ctx.previous.rbac_user };
      const now = store.nowSeconds();
      const user = (await userWithToken({ id: randomUUID(), created_at: now, updated_at: now, name: entity.username, comment: null, enabled: true }, generateToken())) as StoredEntity;
      await deps.users.insert(ctx.trx, user);
      await attachDefaultRole(deps, ctx.trx, { id: user.id, name: String(entity.username) }, (await workspaceIn(ctx)).id);
      return { ...entity, rbac_user: { id: user.id } };
    },
    beforeDelete: async (entity, ctx) => {
      const userId = (entity.rbac_user as { id: string }).id;
      if (callerIn(ctx)?.user.id === userId) throw Errors.forbidden('the admin should not delete themselves');
      ctx.carry = { roles: await defaultRolesOf(ctx.trx, userId) };
    },
    afterDelete: async (entity, ctx) => {
      await deps.users.delete(ctx.trx, (entity.rbac_user as { id: string }).id);
      await dropUnheldRoles(deps, ctx.trx, (ctx.carry?.roles ?? []) as RbacRole[]);
    },
  };
}
