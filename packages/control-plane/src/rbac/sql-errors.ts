import { DbError, ErrorCode, Errors, luaTable, schemaViolation } from '@gatehouse/core';

/** Postgres/PGlite errors of the RBAC and workspace tables as Kong errors. Unknown errors pass through (500). */
export function mapRbacSqlError(err: unknown, written: Record<string, unknown> = {}): unknown {
  if (err instanceof DbError || !err || typeof err !== 'object') return err;
  const { code, constraint } = err as { code?: string; constraint?: string };
  if (code === '23505') {
    switch (constraint) {
      case 'uq_workspaces_name':
      case 'uq_rbac_users_name':
      case 'uq_rbac_roles_ws_name':
        return Errors.unique({ name: written.name ?? null });
      case 'uq_admins_username':
        return Errors.unique({ username: written.username ?? null });
      case 'uq_admins_custom_id':
        return Errors.unique({ custom_id: written.custom_id ?? null });
      case 'uq_admins_email':
        return Errors.unique({ email: written.email ?? null });
      case 'pk_rbac_role_endpoints': {
        const key = { role: { id: written.role_id }, workspace: written.workspace, endpoint: written.endpoint };
        return primaryKeyViolation(key);
      }
      case 'pk_rbac_role_entities':
        return primaryKeyViolation({ role: { id: written.role_id }, entity_id: written.entity_id });
      case 'pk_rbac_user_roles':
        return primaryKeyViolation({ user: { id: written.user_id }, role: { id: written.role_id } });
      default:
        if (constraint?.endsWith('_pkey')) return primaryKeyViolation({ id: written.id ?? null });
        return err;
    }
  }
  // a value too large for an index entry (1,024 characters of multi-byte text can be): bad input, not a fault
  if (code === '54000') return schemaViolation({ '@entity': ['a unique field value is too long'] });
  if (code === '23503') {
    if (constraint?.startsWith('rbac_roles_ws_id') || constraint?.startsWith('workspace_entities_ws_id')) {
      return Errors.referencedBy(constraint.startsWith('rbac_roles') ? 'rbac_roles' : 'workspace_entities', 'workspaces');
    }
    return err;
  }
  return err;
}

export function primaryKeyViolation(key: Record<string, unknown>): DbError {
  return new DbError(ErrorCode.PRIMARY_KEY_VIOLATION, `primary key violation on key '${luaTable(key)}'`, key as never);
}
