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

const page = (name: string): JsonObject => ({
  type: 'object',
  properties: { data: { type: 'array', items: { $ref: `#/components/schemas/${name}` } }, offset: { type: 'string' }, next: { type: ['string', 'null'] } },
  required: ['data', 'next'],
});
const paging = [
  { name: 'size', description: 'page size (1–1000, default 100)', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
  { name: 'offset', description: 'the `offset` of the previous page' },
];
const bad = { description: 'Schema violation', schema: 'KongError' };
const conflict = { description: 'Unique violation', schema: 'KongError' };
const notFound = { description: 'Not found', schema: 'Message' };
const user = { user: 'the user name or id' };
const role = { role: 'the role name or id' };
const endpoint = { ...role, workspace: 'the workspace of the permission (`*` for every workspace)' };
const roleEntity = { ...role, entity: 'the entity id (`*` for every entity)' };
const workspace = { workspace: 'the workspace name or id' };
const admin = { admin: 'the admin username or id' };

const onePermission = (params: Record<string, string>, extra = ''): Partial<Record<Method, OperationDoc>> => ({
  get: { summary: `Read an endpoint permission of a role${extra}`, params, responses: { 200: { description: 'Found', schema: 'RoleEndpoint' }, 404: notFound } },
  patch: {
    summary: `Update an endpoint permission of a role${extra}`,
    params,
    body: 'RoleEndpointPatch',
    responses: { 200: { description: 'Updated', schema: 'RoleEndpoint' }, 400: bad, 404: notFound },
  },
  delete: { summary: `Delete an endpoint permission of a role${extra}`, params, responses: { 204: { description: 'Deleted' }, 404: notFound } },
});

export const RBAC_ROUTE_DOCS: Record<string, Partial<Record<Method, OperationDoc>>> = {
  '/rbac/users': {
    get: { summary: 'List RBAC users', query: paging, responses: { 200: { description: 'One page', schema: page('RbacUser') }, 400: bad } },
    post: {
      summary: 'Create an RBAC user',
      description: 'The token is stored as a bcrypt digest; the answer carries the digest only.',
      body: 'RbacUserInput',
      responses: { 201: { description: 'Created', schema: 'RbacUser' }, 400: bad, 409: conflict },
    },
  },
  '/rbac/users/:user': {
    get: { summary: 'Read an RBAC user', params: user, responses: { 200: { description: 'Found', schema: 'RbacUser' }, 404: notFound } },
    patch: {
      summary: 'Update an RBAC user',
      description: 'Without `user_token` a new token is generated: this one answer carries it in `generated_user_token`.',
      params: user,
      body: 'RbacUserPatch',
      responses: { 200: { description: 'Updated', schema: 'RbacUser' }, 400: bad, 404: notFound },
    },
    delete: { summary: 'Delete an RBAC user', params: user, responses: { 204: { description: 'Deleted' }, 404: notFound } },
  },
  '/rbac/users/:user/roles': {
    get: { summary: "List a user's roles", params: user, responses: { 200: { description: 'The roles', schema: 'RoleList' }, 404: notFound } },
    post: {
      summary: 'Give roles to a user',
      params: user,
      body: 'RoleNames',
      responses: { 201: { description: 'The roles now held', schema: 'RoleList' }, 400: bad, 404: notFound },
    },
    delete: {
      summary: 'Take roles from a user',
      description: '`roles` in the body, or in the query string for clients that cannot send a body with DELETE.',
      params: user,
      query: [{ name: 'roles', description: 'comma-separated role names' }],
      responses: { 204: { description: 'Taken' }, 400: bad, 404: notFound },
    },
  },
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
    get: { summary: 'Read a role', params: role, responses: { 200: { description: 'Found', schema: 'RbacRole' }, 404: notFound } },
    put: {
      summary: 'Create or replace a role',
      params: role,
      body: 'RbacRoleInput',
      responses: { 200: { description: 'Replaced', schema: 'RbacRole' }, 201: { description: 'Created', schema: 'RbacRole' }, 400: bad },
    },
    patch: {
      summary: 'Update a role',
      params: role,
      body: 'RbacRolePatch',
      responses: { 200: { description: 'Updated', schema: 'RbacRole' }, 400: bad, 404: notFound },
    },
    delete: { summary: 'Delete a role with its permissions', params: role, responses: { 204: { description: 'Deleted' }, 404: notFound } },
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
  '/rbac/roles/:role/entities/:entity': {
    get: { summary: 'Read an entity permission of a role', params: roleEntity, responses: { 200: { description: 'Found', schema: 'RoleEntity' }, 404: notFound } },
    patch: {
      summary: 'Update an entity permission of a role',
      params: roleEntity,
      body: 'RoleEntityPatch',
      responses: { 200: { description: 'Updated', schema: 'RoleEntity' }, 400: bad, 404: notFound },
    },
    delete: { summary: 'Delete an entity permission of a role', params: roleEntity, responses: { 204: { description: 'Deleted' }, 404: notFound } },
  },
  '/workspaces': {
    get: { summary: 'List workspaces', query: paging, responses: { 200: { description: 'One page', schema: page('Workspace') }, 404: notFound } },
    post: {
      summary: 'Create a workspace',
      body: 'WorkspaceInput',
      responses: { 201: { description: 'Created', schema: 'Workspace' }, 400: bad, 409: conflict },
    },
  },
  '/workspaces/:workspace': {
    get: { summary: 'Read a workspace', params: workspace, responses: { 200: { description: 'Found', schema: 'Workspace' }, 404: notFound } },
    patch: {
      summary: 'Update a workspace',
      params: workspace,
      body: 'WorkspaceInput',
      responses: { 200: { description: 'Updated', schema: 'Workspace' }, 400: bad, 404: notFound },
    },
    put: {
      summary: 'Create or replace a workspace',
      params: workspace,
      body: 'WorkspaceInput',
      responses: { 200: { description: 'Replaced', schema: 'Workspace' }, 201: { description: 'Created', schema: 'Workspace' }, 400: bad },
    },
    delete: { summary: 'Delete an empty workspace', params: workspace, responses: { 204: { description: 'Deleted' }, 400: bad, 404: notFound } },
  },
  '/admins': {
    get: { summary: 'List admins', query: paging, responses: { 200: { description: 'One page', schema: page('Admin') }, 400: bad } },
    post: {
      summary: 'Create an admin',
      body: 'AdminInput',
      responses: { 201: { description: 'Created', schema: 'Admin' }, 400: bad, 409: conflict },
    },
  },
  '/admins/:admin': {
    get: { summary: 'Read an admin', params: admin, responses: { 200: { description: 'Found', schema: 'Admin' }, 404: notFound } },
    patch: {
      summary: 'Update an admin',
      params: admin,
      body: 'AdminPatch',
      responses: { 200: { description: 'Updated', schema: 'Admin' }, 400: bad, 404: notFound },
    },
    delete: { summary: 'Delete an admin', params: admin, responses: { 204: { description: 'Deleted' }, 404: notFound } },
  },
  '/admins/:admin/roles': {
    get: { summary: "List an admin's roles", params: admin, responses: { 200: { description: 'The roles', schema: 'RoleList' }, 404: notFound } },
    post: {
      summary: 'Give roles to an admin',
      params: admin,
      body: 'RoleNames',
      responses: { 201: { description: 'The roles now held', schema: 'RoleList' }, 400: bad, 404: notFound },
    },
    delete: {
      summary: 'Take roles from an admin',
      params: admin,
      query: [{ name: 'roles', description: 'comma-separated role names' }],
      responses: { 204: { description: 'Taken' }, 400: bad, 404: notFound },
    },
  },
};

export const RBAC_TAG_DESCRIPTIONS: Record<string, string> = {
  rbac: 'RBAC users, roles and their endpoint and entity permissions. Tokens travel in `Kong-Admin-Token`.',
  workspaces: 'Workspaces; every admin path also answers under `/{workspace}/…`.',
  admins: 'Admins: named people, each with an RBAC user.',
};
