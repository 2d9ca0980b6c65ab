import { z } from 'zod';

export const CACHEABLE_METHODS = ['HEAD', 'GET', 'POST', 'PATCH', 'PUT'] as const;

export const proxyCacheConfigSchema = z
  .object({
    response_code: z
      .array(z.number().int().min(100, 'value should be between 100 and 900').max(900, 'value should be between 100 and 900'))
      .min(1, 'length must be at least 1')
      .default([200, 301, 404]),
    request_method: z.array(z.enum(CACHEABLE_METHODS)).default(['GET', 'HEAD']),
    content_type: z.array(z.string()).default(['text/plain', 'application/json']),
    cache_ttl: z.number().int().gt(0, 'value must be greater than 0').default(300),
    /** `memory`: each data plane's own LRU, bounded by bytes; `redis`: one cache shared by every data plane */
    strategy: z.enum(['memory', 'redis']),
    cache_control: z.boolean().default(false),
    ignore_uri_case: z.boolean().default(false),
    storage_ttl: z.number().int().nullable().default(null),
    memory: z.object({ dictionary_name: z.string().default('kong_db_cache') }).strict().prefault({}),
    vary_query_params: z.array(z.string()).nullable().default(null),
    vary_headers: z.array(z.string()).nullable().default(null),
    response_headers: z
      .object({ age: z.boolean().default(true), 'X-Cache-Status': z.boolean().default(true), 'X-Cache-Key': z.boolean().default(true) })
      .strict()
      .prefault({}),
  })
  .strict();

export type ProxyCacheConfig = z.infer<typeof proxyCacheConfigSchema>;
