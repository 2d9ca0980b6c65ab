/**
 * Private material on reads (decision 18): an entity definition lists the fields that hold private material, and one
 * redaction step in the admin API's response path removes them for callers that may not write the entity.
 */

/** A field holding private material. */
export interface PrivateField {
  /** the field, dotted for a member of a record: `pem.private_key`, `key`, `key_alt` */
  path: string;
  /**
   * the field holds a JWK (JSON text, as keys store it, or an object): only these members are private, the public
   * ones stay; JWK text that does not parse is removed whole
   */
  jwkMembers?: readonly string[];
}

/** A JWK's private members (RFC 7518 §6.2.2 / §6.3.2 for EC and RSA, §6.4 for symmetric keys; `oth` for multi-prime RSA). */
export const JWK_PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** The entity as a caller who may not write it sees it: a copy without its private material. */
export function redactPrivateFields(fields: readonly PrivateField[] | undefined, entity: Record<string, unknown>): Record<string, unknown> {
  if (!fields || fields.length === 0) return entity;
  const out: Record<string, unknown> = { ...entity };
  for (const field of fields) redactAt(out, field.path.split('.'), field);
  return out;
}

function redactAt(target: Record<string, unknown>, path: string[], field: PrivateField): void {
  const [head, ...rest] = path;
  if (head === undefined || !Object.hasOwn(target, head)) return;
  const value = target[head];
  if (rest.length > 0) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
    const copy = { ...(value as Record<string, unknown>) };
    redactAt(copy, rest, field);
    target[head] = copy;
    return;
  }
  if (field.jwkMembers) {
    if (value !== null && value !== undefined) target[head] = withoutMembers(value, field.jwkMembers);
  } else delete target[head];
}

function withoutMembers(jwk: unknown, members: readonly string[]): unknown {
  const strip = (object: Record<string, unknown>) => Object.fromEntries(Object.entries(object).filter(([name]) => !members.includes(name)));
  if (typeof jwk === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(jwk);
    } catch {
      return null;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    return JSON.stringify(strip(parsed as Record<string, unknown>));
  }
  if (typeof jwk === 'object' && jwk !== null && !Array.isArray(jwk)) return strip(jwk as Record<string, unknown>);
  return null;
}
