import { jsonSchemaOf, type JsonObject } from '@gatehouse/core';
import type { Method } from '../../http/resources';
import {
  adminInput,
  adminPatch,
  rbacRoleInput,
  rbacRolePatch,
  rbacUserInput,
  rbacUserPatch,
  roleEndpointInput,
  roleEndpointPatch,
  roleEntityInput,
  roleEntityPatch,
  roleNamesInput,
  workspaceInput,
} from '../../rbac/entities';
import type { OperationDoc } from '../route-doc';
import { bad, conflict, listAndCreate, notFound, page, paging, readUpdateDelete } from './common';

/** Docs of the RBAC, workspace and admin routes (`rbac/routes.ts`), with components from the RBAC input schemas. */

export function rbacSchemas(): Record<string, JsonObject> {
  const inputs: Record<string, Parameters<typeof jsonSchemaOf>[0]> = {
    RbacUserInput: rbacUserInput,
    RbacUserPatch: rbacUserPatch,
    RbacRoleInput: rbacRoleInput,
    RbacRolePatch: rbacRolePatch,
    RoleEndpointInput: roleEndpointInput,
    RoleEndpointPatch: roleEndpointPatch,
    RoleEntityInput: roleEntityInput,
    RoleEntityPatch: roleEntityPatch,
    RoleNames: roleNamesInput,
    WorkspaceInput: workspaceInput,
    AdminInput: adminInput,
    AdminPatch: adminPatch,
  };
  const schemas: Record<string, JsonObject> = Object.fromEntries(Object.entries(inputs).map(([name, schema]) => [name, jsonSchemaOf(schema, 'input')]));
  const stored = (description: string, properties: JsonObject): JsonObject => ({ type: 'object', description, properties, additionalProperties: true });
  schemas.RbacUser = stored('An RBAC user; `user_token` holds the bcrypt digest, never the token.', {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    user_token: { type: 'string' },
    user_token_ident: { type: 'string' },
    generated_user_token: { type: 'string', description: 'the new plain token, only in the answer of a PATCH that generated it' },
    comment: { type: ['string', 'null'] },
    enabled: { type: 'boolean' },
    created_at: { type: 'integer' },
  });
  schemas.RbacRole = stored('An RBAC role of a workspace.', {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    comment: { type: ['string', 'null'] },
    is_default: { type: 'boolean' },
    created_at: { type: 'integer' },
  });
  schemas.RoleEndpoint = stored('An endpoint permission of a role.', {
    workspace: { type: 'string' },
    endpoint: { type: 'string' },
    actions: { type: 'array', items: { type: 'string', enum: ['read', 'create', 'update', 'delete'] } },
    negative: { type: 'boolean' },
    comment: { type: ['string', 'null'] },
  });
  schemas.RoleEntity = stored('An entity permission of a role.', {
    entity_id: { type: 'string' },
    entity_type: { type: 'string' },
    actions: { type: 'array', items: { type: 'string', enum: ['read', 'create', 'update', 'delete'] } },
    negative: { type: 'boolean' },
    comment: { type: ['string', 'null'] },
  });
  schemas.Workspace = stored('A workspace.', {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    comment: { type: ['string', 'null'] },
    config: { type: 'object' },
    meta: { type: 'object' },
    created_at: { type: 'integer' },
  });
  schemas.Admin = stored('An admin, with the RBAC user behind it.', {
    id: { type: 'string', format: 'uuid' },
    username: { type: 'string' },
    custom_id: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    rbac_token_enabled: { type: 'boolean' },
    created_at: { type: 'integer' },
  });
  schemas.RoleList = { type: 'object', properties: { roles: { type: 'array', items: { $ref: '#/components/schemas/RbacRole' } } }, additionalProperties: true };
  schemas.PermissionMap = {
    type: 'object',
    description: 'Permissions by workspace and endpoint (or entity id): `{actions: [...], negative: bool}` each.',
    additionalProperties: true,
  };
  return schemas;
}

const user = { user: 'the user name or id' };
const role = { role: 'the role name or id' };
const endpoint = { ...role, workspace: 'the workspace of the permission (`*` for every workspace)' };
const roleEntity = { ...role, entity: 'the entity id (`*` for every entity)' };
const workspace = { workspace: 'the workspace name or id' };
const admin = { admin: 'the admin username or id' };

const onePermission = (params: Record<string, string>, extra = ''): Partial<Record<Method, OperationDoc>> =>
  readUpdateDelete({ noun: `an endpoint permission of a role${extra}`, schema: 'RoleEndpoint', patch: 'RoleEndpointPatch', params });

/** GET, POST and DELETE of the roles held by a user or an admin */
function roleGrants(owner: string, params: Record<string, string>, deleteDescription?: string): Partial<Record<Method, OperationDoc>> {
  return {
    get: { summary: `List ${owner}'s roles`, params, responses: { 200: { description: 'The roles', schema: 'RoleList' }, 404: notFound } },
    post: {
      summary: `Give roles to ${owner}`,
      params,
      body: 'RoleNames',
      responses: { 201: { description: 'The roles now held', schema: 'RoleList' }, 400: bad, 404: notFound },
    },
    delete: {
      summary: `Take roles from ${owner}`,
      ...(deleteDescription ? { description: deleteDescription } : {}),
      params,
      query: [{ name: 'roles', description: 'comma-separated role names' }],
      responses: { 204: { description: 'Taken' }, 400: bad, 404: notFound },
    },
  };
}

export const RBAC_ROUTE_DOCS: Record<string, Partial<Record<Method, OperationDoc>>> = {
  '/rbac/users': listAndCreate({
    list: 'List RBAC users',
    create: 'Create an RBAC user',
    createDescription: 'The token is stored as a bcrypt digest; the answer carries the digest only.',
    schema: 'RbacUser',
    input: 'RbacUserInput',
  }),
  '/rbac/users/:user': {
    ...readUpdateDelete({
      noun: 'an RBAC user',
      schema: 'RbacUser',
      patch: 'RbacUserPatch',
      params: user,
      patchDescription: 'Without `user_token` a new token is generated: this one answer carries it in `generated_user_token`.',
    }),
    put: {
      summary: 'Create or replace an RBAC user',
      params: user,
      body: 'RbacUserInput',
      responses: { 200: { description: 'Created or replaced', schema: 'RbacUser' }, 400: bad, 409: conflict },
    },
  },
  '/rbac/users/:user/roles': roleGrants('a user', user, '`roles` in the body, or in the query string for clients that cannot send a body with DELETE.'),
  '/rbac/users/:user/permissions': {
    get: {
      summary: "A user's effective permissions",
      params: user,
      responses: { 200: { description: 'Endpoint and entity permissions', schema: 'PermissionMap' }, 404: notFound },
    },
  },
  '/rbac/roles': {
    get: { summary: 'List the roles of the workspace', query: paging, responses: { 200: { description: 'One page', schema: page('RbacRole') }, 400: bad } },
    post: {
      summary: 'Create a role',
      body: 'RbacRoleInput',
      responses: { 201: { description: 'Created', schema: 'RbacRole' }, 400: bad, 409: conflict },
    },
    put: {
      summary: 'Create or replace a role by the name in the body',
      body: 'RbacRoleInput',
      responses: { 200: { description: 'Replaced', schema: 'RbacRole' }, 201: { description: 'Created', schema: 'RbacRole' }, 400: bad },
    },
  },
  '/rbac/roles/:role': {
    ...readUpdateDelete({ noun: 'a role', schema: 'RbacRole', patch: 'RbacRolePatch', params: role, deleteSummary: 'Delete a role with its permissions' }),
    put: {
      summary: 'Create or replace a role',
      params: role,
      body: 'RbacRoleInput',
      responses: { 200: { description: 'Replaced', schema: 'RbacRole' }, 201: { description: 'Created', schema: 'RbacRole' }, 400: bad },
    },
  },
  '/rbac/roles/:role/permissions': {
    get: { summary: "A role's permissions", params: role, responses: { 200: { description: 'Endpoint and entity permissions', schema: 'PermissionMap' }, 404: notFound } },
  },
  '/rbac/roles/:role/endpoints/permissions': {
    get: { summary: "A role's endpoint permissions", params: role, responses: { 200: { description: 'By workspace and endpoint', schema: 'PermissionMap' }, 404: notFound } },
  },
  '/rbac/roles/:role/endpoints': {
    get: {
      summary: "List a role's endpoint permissions",
      params: role,
      responses: { 200: { description: 'The permissions', schema: { type: 'object', properties: { data: { type: 'array', items: { $ref: '#/components/schemas/RoleEndpoint' } } } } }, 404: notFound },
    },
    post: {
      summary: 'Add an endpoint permission to a role',
      description: '`*` in an endpoint replaces exactly one segment; a negative permission denies.',
      params: role,
      body: 'RoleEndpointInput',
      responses: { 201: { description: 'Created', schema: 'RoleEndpoint' }, 400: bad, 404: notFound, 409: conflict },
    },
  },
  '/rbac/roles/:role/endpoints/:workspace': onePermission(endpoint, ' on the endpoint `/`'),
  '/rbac/roles/:role/endpoints/:workspace/*endpoint': onePermission({ ...endpoint, endpoint: 'the endpoint without its leading `/`; may contain `/` and `*`' }),
  '/rbac/roles/:role/entities/permissions': {
    get: { summary: "A role's entity permissions", params: role, responses: { 200: { description: 'By entity id', schema: 'PermissionMap' }, 404: notFound } },
  },
  '/rbac/roles/:role/entities': {
    get: {
      summary: "List a role's entity permissions",
      params: role,
      responses: { 200: { description: 'The permissions', schema: page('RoleEntity') }, 404: notFound },
    },
    post: {
      summary: 'Add an entity permission to a role',
      params: role,
      body: 'RoleEntityInput',
      responses: { 201: { description: 'Created', schema: 'RoleEntity' }, 400: bad, 404: notFound, 409: conflict },
    },
  },
  '/rbac/roles/:role/entities/:entity': readUpdateDelete({ noun: 'an entity permission of a role', schema: 'RoleEntity', patch: 'RoleEntityPatch', params: roleEntity }),
  '/workspaces': {
    get: { summary: 'List workspaces', query: paging, responses: { 200: { description: 'One page', schema: page('Workspace') }, 404: notFound } },
    post: {
      summary: 'Create a workspace',
      body: 'WorkspaceInput',
      responses: { 201: { description: 'Created', schema: 'Workspace' }, 400: bad, 409: conflict },
    },
  },
  '/workspaces/:workspace': {
    ...readUpdateDelete({ noun: 'a workspace', schema: 'Workspace', patch: 'WorkspaceInput', params: workspace }),
    put: {
      summary: 'Create or replace a workspace',
      params: workspace,
      body: 'WorkspaceInput',
      responses: { 200: { description: 'Replaced', schema: 'Workspace' }, 201: { description: 'Created', schema: 'Workspace' }, 400: bad },
    },
    delete: { summary: 'Delete an empty workspace', params: workspace, responses: { 204: { description: 'Deleted' }, 400: bad, 404: notFound } },
  },
  '/admins': listAndCreate({ list: 'List admins', create: 'Create an admin', schema: 'Admin', input: 'AdminInput' }),
  '/admins/:admin': {
    ...readUpdateDelete({ noun: 'an admin', schema: 'Admin', patch: 'AdminPatch', params: admin }),
    put: {
      summary: 'Create or replace an admin',
      params: admin,
      body: 'AdminInput',
      responses: { 200: { description: 'Created or replaced', schema: 'Admin' }, 400: bad, 409: conflict },
    },
  },
  '/admins/:admin/roles': roleGrants('an admin', admin),
};

export const RBAC_TAG_DESCRIPTIONS: Record<string, string> = {
  rbac: 'RBAC users, roles and their endpoint and entity permissions. Tokens travel in `Kong-Admin-Token`.',
  workspaces: 'Workspaces; every admin path also answers under `/{workspace}/…`.',
  admins: 'Admins: named people, each with an RBAC user.',
};
