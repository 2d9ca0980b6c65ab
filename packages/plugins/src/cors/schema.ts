import { z } from 'zod';

export const CORS_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT'] as const;

/** An origin is either `*`, an exact origin, or a regular expression matched against the whole Origin header. */
const origin = z.string().refine(
  (value) => {
    if (value === '*') return true;
    try {
      new RegExp(value);
      return true;
    } catch {
      return false;
    }
  },
  { error: (issue) => `'${String(issue.input)}' is not a valid regex` },
);

export const corsConfigSchema = z
  .object({
    origins: z.array(origin).nullable().default(null),
    headers: z.array(z.string()).nullable().default(null),
    exposed_headers: z.array(z.string()).nullable().default(null),
    methods: z.array(z.enum(CORS_METHODS)).default([...CORS_METHODS]),
    max_age: z.number().nullable().default(null),
    credentials: z.boolean().default(false),
    private_network: z.boolean().default(false),
    preflight_continue: z.boolean().default(false),
  })
  .strict();

export type CorsConfig = z.infer<typeof corsConfigSchema>;
