import { z } from 'zod';

/** `name:value` (the first colon splits; the value may hold more colons). */
export function splitPair(entry: string): [string, string] {
  const colon = entry.indexOf(':');
  return [entry.slice(0, colon), entry.slice(colon + 1)];
}

/** Kong's `colon_strings_array`: every element must be `name:value`. */
export const colonPairs = () =>
  z
    .array(z.string().regex(/^[^:]+:.*$/, { error: (issue) => `invalid value: ${String(issue.input)}` }))
    .default([]);

export const names = () => z.array(z.string()).default([]);
