import { z } from 'zod';

/** Kong 3.x `prometheus` config: every per-request series is off until its flag says otherwise. */
export const prometheusConfigSchema = z
  .object({
    per_consumer: z.boolean().default(false),
    status_code_metrics: z.boolean().default(false),
    latency_metrics: z.boolean().default(false),
    bandwidth_metrics: z.boolean().default(false),
    upstream_health_metrics: z.boolean().default(false),
    ai_metrics: z.boolean().default(false),
  })
  .strict();

export type PrometheusConfig = z.infer<typeof prometheusConfigSchema>;
