/**
 * Input schemas of RBAC's permission sub-routes (zod; the one place their fields and checks are written), and the
 * input views of RBAC's entity families for the OpenAPI document, derived from their definitions in
 * `@gatehouse/core` (entities/rbac.ts).
 */
import { z } from 'zod';
import { adminSchema, coerceInput, rbacRoleSchema, rbacUserSchema, validateWith, workspaceSchema } from '@gatehouse/core';

const nullableText = () => z.string().nullable();
const requiredText = () => z.string().trim().min(1);
/** `actions` as a comma-separated string, `*`, or an array of names; parsed by decide.parseActions. */
const actionsInput = () => z.union([z.string(), z.array(z.string())]);
const generated = { created_at: true, updated_at: true } as const;

export const workspaceInput = workspaceSchema.omit(generated);
export const rbacUserInput = rbacUserSchema.omit({ ...generated, user_token_ident: true });
export const rbacUserPatch = rbacUserInput.partial().omit({ id: true });
export const rbacRoleInput = rbacRoleSchema.omit({ ...generated, workspace: true });
export const rbacRolePatch = rbacRoleInput.partial().omit({ id: true });
export const adminInput = adminSchema.omit({ ...generated, status: true, rbac_user: true });
export const adminPatch = adminInput.partial().omit({ id: true });

export const roleEndpointInput = z
  .object({
    workspace: requiredText().optional(),
    endpoint: requiredText(),
    actions: actionsInput(),
    negative: z.boolean().optional(),
    comment: nullableText().optional(),
  })
  .strict();

export const roleEndpointPatch = z
  .object({ actions: actionsInput().optional(), negative: z.boolean().optional(), comment: nullableText().optional() })
  .strict();

export const roleEntityInput = z
  .object({
    entity_id: requiredText(),
    entity_type: requiredText().optional(),
    actions: actionsInput(),
    negative: z.boolean().optional(),
    comment: nullableText().optional(),
  })
  .strict();

export const roleEntityPatch = roleEndpointPatch;

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

/** `entity_type` stored for `entity_id = *`, whatever type was sent (Kong). */
export const WILDCARD_ENTITY_TYPE = 'wildcard';
