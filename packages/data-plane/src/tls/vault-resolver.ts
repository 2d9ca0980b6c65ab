import { BUNDLED_VAULTS, isVaultReference, parseVaultReference, type SnapshotVault } from '@gatehouse/core';

/** A reference that cannot be resolved here (unknown vault, missing variable, missing JSON key). */
export class VaultReferenceError extends Error {
  override readonly name = 'VaultReferenceError';
}

/**
 * Resolves `{vault://<prefix>/<name>[/<key>]}` references from this process's environment, Kong's `env` vault:
 * the variable is the name upper-cased with `-` turned into `_`, after the vault entity's `config.prefix` when the
 * reference names a `vaults` entity; with a key, the variable holds JSON and the key's value is used.
 */
export class VaultResolver {
  private readonly byPrefix: ReadonlyMap<string, SnapshotVault>;

  constructor(
    vaults: readonly SnapshotVault[],
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.byPrefix = new Map(vaults.map((v) => [v.prefix, v]));
  }

  /** the value itself when it is not a reference */
  resolve(value: string): string {
    if (!isVaultReference(value)) return value;
    const ref = parseVaultReference(value)!;
    let envPrefix = '';
    const entity = this.byPrefix.get(ref.prefix);
    if (entity) {
      if (entity.name !== 'env') throw new VaultReferenceError(`vault '${entity.name}' is not installed (reference ${value})`);
      envPrefix = typeof entity.config?.prefix === 'string' ? entity.config.prefix : '';
    } else if (!(BUNDLED_VAULTS as readonly string[]).includes(ref.prefix)) {
      throw new VaultReferenceError(`no vault with prefix '${ref.prefix}' (reference ${value})`);
    }
    const variable = `${envPrefix}${ref.name}`.toUpperCase().replace(/-/g, '_');
    const raw = this.env[variable];
    if (raw === undefined) throw new VaultReferenceError(`environment variable ${variable} is not set (reference ${value})`);
    if (ref.key === null) return raw;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new VaultReferenceError(`environment variable ${variable} does not hold JSON (reference ${value})`);
    }
    const found = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>)[ref.key] : undefined;
    if (typeof found !== 'string') throw new VaultReferenceError(`key '${ref.key}' not found in ${variable} (reference ${value})`);
    return found;
  }
}

/** A copy of `config` with the references at the given dotted paths resolved; problems are reported, values kept. */
export function resolveConfigReferences(
  config: Record<string, unknown>,
  paths: readonly string[],
  resolver: VaultResolver,
  onError: (path: string, err: Error) => void,
): Record<string, unknown> {
  let out = config;
  for (const path of paths.flatMap((p) => (p.includes('*') ? expandWildcards(config, p) : [p]))) {
    const parts = path.split('.');
    let holder: unknown = out;
    for (const part of parts.slice(0, -1)) holder = holder !== null && typeof holder === 'object' ? (holder as Record<string, unknown>)[part] : undefined;
    const last = parts[parts.length - 1]!;
    const value = holder !== null && typeof holder === 'object' ? (holder as Record<string, unknown>)[last] : undefined;
    if (!isVaultReference(value)) continue;
    let resolved: string;
    try {
      resolved = resolver.resolve(value);
    } catch (err) {
      onError(path, err as Error);
      continue;
    }
    if (out === config) out = structuredClone(config);
    let target = out as Record<string, unknown>;
    for (const part of parts.slice(0, -1)) target = target[part] as Record<string, unknown>;
    target[last] = resolved;
  }
  return out;
}

/** `list.*.field` as the concrete paths of `config` (`list.0.field`, `list.1.field`, …): `*` stands for each array element. */
function expandWildcards(config: Record<string, unknown>, path: string): string[] {
  let found: Array<{ prefix: string[]; value: unknown }> = [{ prefix: [], value: config }];
  for (const part of path.split('.')) {
    const next: typeof found = [];
    for (const { prefix, value } of found) {
      if (part === '*') {
        if (Array.isArray(value)) value.forEach((item, i) => next.push({ prefix: [...prefix, String(i)], value: item }));
      } else if (value !== null && typeof value === 'object') {
        next.push({ prefix: [...prefix, part], value: (value as Record<string, unknown>)[part] });
      }
    }
    found = next;
  }
  return found.map((f) => f.prefix.join('.'));
}
