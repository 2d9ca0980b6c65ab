import { verdictAt, WILDCARD, type EntityRuleMap, type RbacAction } from './decide';

/** The entity rules of one action as sets, for a query that applies decideEntity to many rows at once. */
export interface EntityGrants {
  /** ids (of entities or workspaces) whose rule allows the action */
  allowed: string[];
  /** ids whose rule denies it */
  denied: string[];
  /** the `*` rule allows it */
  all: boolean;
}

/**
 * decideEntity for every row, spelled as sets: with e the entity's id and w its workspace's (w ≠ e), a row is
 * allowed when e ∈ allowed and w ∉ denied; or e is in neither set and w ∈ allowed; or e and w are in neither set and
 * `all`.
 */
export function entityGrants(rules: EntityRuleMap, action: RbacAction): EntityGrants {
  const grants: EntityGrants = { allowed: [], denied: [], all: verdictAt(rules.get(WILDCARD), action) === 'allow' };
  for (const [key, mask] of rules) {
    if (key === WILDCARD) continue;
    const verdict = verdictAt(mask, action);
    if (verdict) grants[verdict === 'allow' ? 'allowed' : 'denied'].push(key);
  }
  return grants;
}
