/**
 * The RBAC and workspace entities: input schemas (zod; the one place their fields, defaults and checks are written)
 * and the shapes the admin API returns. Storage lives in rbac/migrations.ts and rbac/store.ts.
 */
import { z } from 'zod';
import { coerceInput, validateWith } from '@gatehouse/core';

const bool = () => z.boolean();
const nullableText = () => z.string().nullable();
const requiredText = () => z.string().trim().min(1);
const name = () =>
  z
    .string()
    .min(1)
    .regex(/^[\p{L}\p{N}\-._~@]+$/u, "invalid value: must contain only alphanumeric and '., -, _, ~, @' characters");
/** `actions` as a comma-separated string, `*`, or an array of names; parsed by decide.parseActions. */
const actionsInput = () => z.union([z.string(), z.array(z.string())]);
const jsonRecord = () => z.record(z.string(), z.unknown());

export const workspaceInput = z
  .object({
    id: z.uuid().optional(),
    name: name(),
    comment: nullableText().optional(),
    config: jsonRecord().optional(),
    meta: jsonRecord().optional(),
  })
  .strict();

export const rbacUserInput = z
  .object({
    id: z.uuid().optional(),
    name: requiredText(),
    user_token: requiredText(),
    comment: nullableText().optional(),
    enabled: bool().optional(),
  })
  .strict();

export const rbacUserPatch = rbacUserInput.partial().omit({ id: true });

export const rbacRoleInput = z
  .object({
    id: z.uuid().optional(),
    name: name(),
    comment: nullableText().optional(),
    is_default: bool().optional(),
  })
  .strict();

export const rbacRolePatch = rbacRoleInput.partial().omit({ id: true });

export const roleEndpointInput = z
  .object({
    workspace: requiredText().optional(),
    endpoint: requiredText(),
    actions: actionsInput(),
    negative: bool().optional(),
    comment: nullableText().optional(),
  })
  .strict();

export const roleEndpointPatch = z
  .object({ actions: actionsInput().optional(), negative: bool().optional(), comment: nullableText().optional() })
  .strict();

export const roleEntityInput = z
  .object({
    entity_id: requiredText(),
    entity_type: requiredText().optional(),
    actions: actionsInput(),
    negative: bool().optional(),
    comment: nullableText().optional(),
  })
  .strict();

export const roleEntityPatch = roleEndpointPatch;

export const adminInput = z
  .object({
    id: z.uuid().optional(),
    username: requiredText(),
    custom_id: nullableText().optional(),
    email: nullableText().optional(),
    rbac_token_enabled: bool().optional(),
  })
  .strict();

export const adminPatch = adminInput.partial().omit({ id: true });

/** A comma-separated list of role names (`roles=a,b`) or an array. */
export const roleNamesInput = z.object({ roles: z.union([z.string(), z.array(z.string())]).optional() }).passthrough();

/**
 * Validates a body with one of the schemas above: form strings are coerced by the schema (`"true"` → true,
 * `''` → null), failures are Kong's schema violation (400).
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const input = body && typeof body === 'object' && !Array.isArray(body) ? body : {};
  return validateWith(schema, coerceInput(schema, input));
}

/** What the admin API returns for each entity. Timestamps are integer seconds. */
export interface WorkspaceView {
  id: string;
  name: string;
  comment: string | null;
  config: Record<string, unknown>;
  meta: Record<string, unknown>;
  created_at: number;
  updated_at: number;
}

export interface RbacUserView {
  id: string;
  name: string;
  /** the bcrypt digest, never the plain token */
  user_token: string;
  user_token_ident: string;
  comment: string | null;
  enabled: boolean;
  created_at: number;
  updated_at: number;
}

export interface RbacRoleView {
  id: string;
  name: string;
  comment: string | null;
  is_default: boolean;
  created_at: number;
  updated_at: number;
}

export interface RoleEndpointView {
  role: { id: string };
  workspace: string;
  endpoint: string;
  actions: string[];
  negative: boolean;
  comment: string | null;
  created_at: number;
  updated_at: number;
}

export interface RoleEntityView {
  role: { id: string };
  entity_id: string;
  entity_type: string;
  actions: string[];
  negative: boolean;
  comment: string | null;
  created_at: number;
  updated_at: number;
}

export interface AdminView {
  id: string;
  username: string;
  custom_id: string | null;
  email: string | null;
  rbac_token_enabled: boolean;
  status: number;
  rbac_user: { id: string };
  created_at: number;
  updated_at: number;
}

/**
 * Entity types an entity permission may name, with the table that holds them (Kong's DAO names). Types stored by
 * other parts of the control plane (services, routes, consumers, plugins, credentials, keys, …) are checked against
 * their own tables when registered with the store; these are the ones RBAC owns.
 */
export const RBAC_ENTITY_TABLES: Readonly<Record<string, string>> = {
  workspaces: 'workspaces',
  rbac_users: 'rbac_users',
  rbac_roles: 'rbac_roles',
  admins: 'admins',
};

/** `entity_type` stored for `entity_id = *`, whatever type was sent (Kong). */
export const WILDCARD_ENTITY_TYPE = 'wildcard';
