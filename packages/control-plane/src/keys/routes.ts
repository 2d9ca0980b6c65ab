import { schemaViolation } from '@gatehouse/core';
import { writeInput, type AdminContext } from '../http/context';
import type { Keyring } from './keyring';
import { keyKind, keySetKind } from './kinds';

/**
 * Admin endpoints of key sets and keys: the generated ones (`/key-sets`, `/keys`, `/key-sets/{s}/keys[/{k}]`,
 * `/keys/{k}/set`) plus `PUT /key-sets` with the name in the body, the interface document's upsert by name.
 * Deleting a key set removes its keys through the foreign key's ON DELETE CASCADE, in the delete's transaction.
 */
export function mountKeyRoutes(ctx: AdminContext, keyring: Keyring): void {
  const sets = ctx.entities.register(keySetKind);
  const keys = ctx.entities.register(keyKind(keyring));
  ctx.mountEntity(sets);
  ctx.mountEntity(keys);

  ctx.resources.add(`/${sets.def.adminPath}`, {
    put: async (req, res) => {
      const input = writeInput(req, res);
      const ref = input.body.name ?? input.body.id;
      if (typeof ref !== 'string' || ref === '') throw schemaViolation({ name: 'required field missing' });
      res.json(await ctx.entities.upsert(sets, ref, input));
    },
  });
}

/** For `createAdminApp({ extensions: [keysExtension(keyring)] })`. */
export function keysExtension(keyring: Keyring): (ctx: AdminContext) => void {
  return (ctx) => mountKeyRoutes(ctx, keyring);
}
