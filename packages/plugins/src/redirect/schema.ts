import { z } from 'zod';

const BETWEEN = 'value should be between 100 and 599';

/** Kong 3.9 `redirect`: where to send the client, with which status, and whether its own path and query go along. */
export const redirectConfigSchema = z
  .object({
    status_code: z.number().int().min(100, BETWEEN).max(599, BETWEEN).default(301),
    location: z.url({ error: (issue) => (issue.input === undefined || issue.input === null ? undefined : 'missing host in url') }),
    keep_incoming_path: z.boolean().default(false),
  })
  .strict();

export type RedirectConfig = z.infer<typeof redirectConfigSchema>;
