/**
 * RBAC beyond its entity families (rbac/kinds.ts) and the permissions of roles (rbac/role-permissions.ts):
 * authentication, the caller's merged rules, the request's workspace, what a create records in its transaction, and
 * the bootstrap super-admin. HTTP concerns (paths, statuses) live in rbac/routes.ts.
 */
import { randomUUID } from 'node:crypto';
import { DbError, ErrorCode, RBAC_ENTITIES, rbacRoles, rbacUsers, type RbacRole, type RbacUser, type Workspace } from '@gatehouse/core';
import { SqlErrorMapper } from '../db/sql-errors';
import type { Db } from '../db/tables';
import type { EntityAccess } from '../service/entity-access';
import type { EntityKind } from '../service/entity-kind';
import type { EntityService } from '../service/entity-service';
import { EntityRepository, type Executor } from '../store/entity-repository';
import { ALL_ACTIONS, DEFAULT_WORKSPACE, mergeEndpointPermissions, mergeEntityPermissions, type EndpointRuleMap, type EntityRuleMap } from './decide';
import { assertTokenFree, attachDefaultRole, userWithToken } from './kinds';
import * as store from './store';
import type { EntityRow } from './store';
import { normalizeToken, tokenIdent, verifyToken } from './token';

/** The authenticated caller of a request, when enforcement is on. */
export interface Caller {
  user: RbacUser;
  /** every role of the user (its default role included) */
  roles: RbacRole[];
  endpointRules: EndpointRuleMap;
  entityRules: EntityRuleMap;
}

/** Where a request runs: its workspace and, with enforcement on, its caller (and, with entity checks, its authorizer). */
export interface RbacScope {
  workspace: Workspace;
  caller: Caller | null;
  access?: EntityAccess;
}

export interface RbacServiceOptions {
  /**
   * entity types (DAO table names) stored by the rest of the control plane, for `entity_id` existence checks;
   * read on every call so entities registered later count
   */
  entityTypes?: () => Iterable<string>;
}

/** The RBAC families as the admin API serves them, once mounted (rbac/routes.ts). */
export interface RbacFamilies {
  entities: EntityService;
  users: EntityKind;
  roles: EntityKind;
  admins: EntityKind;
  workspaces: EntityKind;
}

export class RbacService {
  readonly errors = new SqlErrorMapper([...RBAC_ENTITIES]);
  readonly users: EntityRepository;
  readonly roles: EntityRepository;
  private mounted: RbacFamilies | null = null;
  private adminRoot: ((segment: string) => boolean) | null = null;

  constructor(
    readonly db: Db,
    private readonly options: RbacServiceOptions = {},
  ) {
    this.users = new EntityRepository(rbacUsers, this.errors);
    this.roles = new EntityRepository(rbacRoles, this.errors);
    const role = (row: Record<string, unknown>) => ({ id: row.role_id });
    this.errors.addPrimaryKey('pk_rbac_role_endpoints', 'rbac_role_endpoints', (r) => ({ role: role(r), workspace: r.workspace, endpoint: r.endpoint }));
    this.errors.addPrimaryKey('pk_rbac_role_entities', 'rbac_role_entities', (r) => ({ role: role(r), entity_id: r.entity_id }));
    this.errors.addPrimaryKey('pk_rbac_user_roles', 'rbac_user_roles', (r) => ({ user: { id: r.user_id }, role: role(r) }));
    this.errors.addForeignKey('workspace_entities_ws_id_fkey', 'workspace_entities', 'ws_id', 'workspaces');
  }

  /** the families' kinds and service, set when the routes are mounted */
  mount(families: RbacFamilies): void {
    this.mounted = families;
  }

  /** how to tell an admin collection from a workspace name: the first segments of the registered admin paths */
  setAdminRoots(isAdminRoot: (segment: string) => boolean): void {
    this.adminRoot = isAdminRoot;
  }

  /** whether a first path segment is an admin collection (`services`, `rbac`, …) rather than a workspace */
  isAdminRoot(segment: string): boolean {
    return this.adminRoot?.(segment) ?? false;
  }

  get families(): RbacFamilies {
    if (!this.mounted) throw new Error('RBAC routes are not mounted');
    return this.mounted;
  }

  /** One transaction (not a config version); SQL errors become Kong errors through the one mapper, with the row written. */
  async write<T>(work: (trx: Executor) => Promise<T>, written: () => Record<string, unknown> | undefined = () => undefined): Promise<T> {
    try {
      return await this.db.transaction().execute(work);
    } catch (err) {
      throw this.errors.map(err, { operation: 'write', entity: written() });
    }
  }

  /** the tables of entities stored by the rest of the control plane, RBAC's own included */
  configTables(): string[] {
    return [...new Set([...(this.options.entityTypes?.() ?? []), ...RBAC_ENTITIES.map((d) => d.name)])];
  }

  // ── workspaces ─────────────────────────────────────────────────────────────

  async defaultWorkspace(ex: Executor = this.db): Promise<Workspace> {
    const ws = await store.findWorkspace(ex, DEFAULT_WORKSPACE);
    if (!ws) throw new Error('the default workspace is missing: database not migrated');
    return ws;
  }

  findWorkspace(nameOrId: string, ex: Executor = this.db): Promise<Workspace | null> {
    return store.findWorkspace(ex, nameOrId);
  }

  /** entity id → workspace id for the given ids; ids without a record map to the default workspace. */
  async workspacesOf(entityIds: string[], ex: Executor = this.db): Promise<Map<string, string>> {
    const recorded = await store.entityWorkspaces(ex, entityIds);
    const def = (await this.defaultWorkspace(ex)).id;
    return new Map(entityIds.map((id) => [id, recorded.get(id) ?? def]));
  }

  /**
   * Runs in the transaction of every create through the admin API: an entity created under a workspace other than
   * `default` is recorded as living there, and the creator's default role is granted every action on it (Kong §1.3).
   * RBAC's own families are neither (roles carry their workspace; users and admins are global).
   */
  async recordCreation(trx: Executor, entityType: string, entityId: string, scope: RbacScope | null): Promise<void> {
    if (!scope || ['rbac_users', 'rbac_roles', 'admins'].includes(entityType)) return;
    if (scope.workspace.name !== DEFAULT_WORKSPACE && entityType !== 'workspaces') {
      await store.recordEntityWorkspace(trx, entityId, entityType, scope.workspace.id);
    }
    const caller = scope.caller;
    const own = caller?.roles.find((r) => r.is_default && r.name === caller.user.name);
    if (!own) return;
    const now = store.nowSeconds();
    const grant: EntityRow = { role_id: own.id, entity_id: entityId, entity_type: entityType, actions: ALL_ACTIONS, negative: false, comment: null, created_at: now, updated_at: now };
    await store.insertPermission(trx, 'entities', grant, true);
  }

  // ── authentication ─────────────────────────────────────────────────────────

  /** Finds the enabled user holding this token, or null. Disabled users never match (Kong §2). */
  async authenticate(token: string, cached?: { userId: string; storedHash: string }): Promise<RbacUser | null> {
    const candidates = await store.usersByIdent(this.db, tokenIdent(token), true);
    if (cached) {
      const hit = candidates.find((u) => u.id === cached.userId && u.user_token === cached.storedHash);
      if (hit) return hit;
    }
    for (const user of candidates) if (await verifyToken(token, user.user_token)) return user;
    return null;
  }

  /** The caller's roles and merged rules, loaded fresh for each request. */
  async callerOf(user: RbacUser): Promise<Caller> {
    const roles = await store.rolesOfUser(this.db, user.id);
    const perms = await store.permissionsOfRoles(this.db, roles.map((r) => r.id));
    return { user, roles, endpointRules: mergeEndpointPermissions(perms.endpoints), entityRules: mergeEntityPermissions(perms.entities) };
  }

  // ── bootstrap ──────────────────────────────────────────────────────────────

  /**
   * Creates, once, the user `gatehouse-admin` holding the super-admin role, with the given token. When the user
   * exists already nothing changes (its token included): the environment seeds, it does not rotate.
   * Returns true when the user was created.
   */
  async bootstrapSuperAdmin(token: string, name = BOOTSTRAP_USER): Promise<boolean> {
    if (normalizeToken(token) === '') return false;
    if (await store.findUser(this.db, name)) return false;
    const now = store.nowSeconds();
    const user = (await userWithToken({ id: randomUUID(), created_at: now, updated_at: now, name, comment: 'Created from GATEHOUSE_ADMIN_TOKEN', enabled: true }, token)) as RbacUser;
    try {
      await this.write(async (trx) => {
        const ws = await this.defaultWorkspace(trx);
        await assertTokenFree(trx, token);
        await this.users.insert(trx, user);
        await attachDefaultRole(this, trx, user, ws.id);
        const superAdmin = await store.findRole(trx, ws.id, 'super-admin');
        if (!superAdmin) throw new Error('the super-admin role is missing');
        await store.linkUserRole(trx, user.id, superAdmin.id);
      });
    } catch (err) {
      // another control plane created it at the same moment
      if (err instanceof DbError && err.code === ErrorCode.UNIQUE_VIOLATION) return false;
      throw err;
    }
    return true;
  }
}

export const BOOTSTRAP_USER = 'gatehouse-admin';
