import { z } from 'zod';

export const CORRELATION_ID_GENERATORS = ['uuid', 'uuid#counter', 'tracker'] as const;

/** Kong 3.x `correlation-id` config. */
export const correlationIdConfigSchema = z
  .object({
    header_name: z.string().min(1).default('Kong-Request-ID'),
    generator: z.enum(CORRELATION_ID_GENERATORS, { error: `expected one of: ${CORRELATION_ID_GENERATORS.join(', ')}` }).default('uuid#counter'),
    echo_downstream: z.boolean().default(false),
  })
  .strict();

export type CorrelationIdConfig = z.infer<typeof correlationIdConfigSchema>;
