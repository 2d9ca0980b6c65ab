import { z } from 'zod';

/** `name:value` (the first colon splits; the value may hold more colons). */
export function splitPair(entry: string): [string, string] {
  const colon = entry.indexOf(':');
  return [entry.slice(0, colon), entry.slice(colon + 1)];
}

/** One element of Kong's `colon_strings_array`: `name:value` (checks added after it run only on such a value). */
export const colonPair = () => z.string().regex(/^[^:]+:.*$/, { error: (issue) => `invalid value: ${String(issue.input)}`, abort: true });

/** Kong's `colon_strings_array`: every element must be `name:value`. */
export const colonPairs = () => z.array(colonPair()).default([]);

export const names = () => z.array(z.string()).default([]);
