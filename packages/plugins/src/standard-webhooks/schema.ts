import { z } from 'zod';

/** Kong 3.9 `standard-webhooks`: the shared secret and how old a webhook's timestamp may be. */
export const standardWebhooksConfigSchema = z
  .object({
    secret_v1: z.string(),
    tolerance_second: z.number().int().gt(-1, 'value must be greater than -1').default(300),
  })
  .strict();

export type StandardWebhooksConfig = z.infer<typeof standardWebhooksConfigSchema>;
