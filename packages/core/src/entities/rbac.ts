import { z } from 'zod';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, foreignRef } from './fields';

/** Kong's RBAC names: letters, digits, `-._~` and `@` (a user's default role is named after the user). */
const rbacName = () =>
  z
    .string()
    .min(1)
    .regex(/^[\p{L}\p{N}\-._~@]+$/u, "invalid value: must contain only alphanumeric and '., -, _, ~, @' characters");
const requiredText = () => z.string().trim().min(1);
const comment = () => z.string().nullable().default(null);
/** free-form settings: a PATCH merges them key by key, a PUT replaces them (Kong's workspace `config` and `meta`) */
const settings = () => z.object({}).catchall(z.unknown());

export const workspaceSchema = z
  .object({
    ...baseFieldsWithUpdate,
    name: rbacName(),
    comment: comment(),
    config: settings().default({}),
    meta: settings().default({}),
  })
  .strict();
export type Workspace = z.infer<typeof workspaceSchema> & { id: string; created_at: number; updated_at: number };

/** Workspaces (Kong Enterprise): a name space for entities and RBAC roles; `default` always exists. */
export const workspaces = defineEntity({
  name: 'workspaces',
  adminPath: 'workspaces',
  schema: workspaceSchema,
  endpointKey: 'name',
  uniques: ['name'],
  foreignKeys: [],
  updatedAt: true,
});

export const rbacUserSchema = z
  .object({
    ...baseFieldsWithUpdate,
    name: requiredText(),
    /** given in clear, stored (and returned) as its bcrypt digest */
    user_token: requiredText(),
    /** first 5 hex characters of SHA-1(token): finds candidate users without a scan; set by the server */
    user_token_ident: z.string().optional(),
    comment: comment(),
    enabled: z.boolean().default(true),
  })
  .strict();
export type RbacUser = z.infer<typeof rbacUserSchema> & { id: string; created_at: number; updated_at: number; user_token_ident: string };

export const rbacUsers = defineEntity({
  name: 'rbac_users',
  adminPath: 'rbac/users',
  schema: rbacUserSchema,
  endpointKey: 'name',
  uniques: ['name'],
  foreignKeys: [],
  updatedAt: true,
});

export const rbacRoleSchema = z
  .object({
    ...baseFieldsWithUpdate,
    /** the workspace the role lives in: the request's, never given in a body */
    workspace: foreignRef().optional(),
    name: rbacName(),
    comment: comment(),
    /** a user's own role, named after it; immutable */
    is_default: z.boolean().default(false),
  })
  .strict();
export type RbacRole = z.infer<typeof rbacRoleSchema> & { id: string; created_at: number; updated_at: number; workspace: { id: string } };

export const rbacRoles = defineEntity({
  name: 'rbac_roles',
  adminPath: 'rbac/roles',
  schema: rbacRoleSchema,
  endpointKey: 'name',
  uniques: [],
  compositeUniques: [['workspace', 'name']],
  foreignKeys: [{ field: 'workspace', entity: 'workspaces', onDelete: 'restrict', required: true }],
  updatedAt: true,
});

export const adminSchema = z
  .object({
    ...baseFieldsWithUpdate,
    username: requiredText(),
    custom_id: z.string().nullable().default(null),
    email: z.string().nullable().default(null),
    rbac_token_enabled: z.boolean().default(true),
    status: z.number().int().default(0),
    /** the RBAC user the admin owns, created with it; set by the server */
    rbac_user: foreignRef().optional(),
  })
  .strict();
export type Admin = z.infer<typeof adminSchema> & { id: string; created_at: number; updated_at: number; rbac_user: { id: string } };

export const admins = defineEntity({
  name: 'admins',
  adminPath: 'admins',
  schema: adminSchema,
  endpointKey: 'username',
  uniques: ['username', 'custom_id', 'email'],
  foreignKeys: [{ field: 'rbac_user', entity: 'rbac_users', onDelete: 'cascade', required: true }],
  updatedAt: true,
});

/** The RBAC families, in the order their tables depend on each other. */
export const RBAC_ENTITIES = [workspaces, rbacUsers, rbacRoles, admins] as const;
