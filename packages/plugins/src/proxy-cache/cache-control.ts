/** Cache-Control directives, lower-case names; `true` for directives without a value. */
export type Directives = Map<string, string | true>;

export function parseCacheControl(value: string | string[] | undefined): Directives {
  const directives: Directives = new Map();
  if (value === undefined) return directives;
  for (const part of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (name === '') continue;
    directives.set(name, eq < 0 ? true : part.slice(eq + 1).trim().replace(/^"|"$/g, ''));
  }
  return directives;
}

export function seconds(directives: Directives, name: string): number | null {
  const value = directives.get(name);
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return null;
  return Number(value);
}
