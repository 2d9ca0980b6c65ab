import { z } from 'zod';
import { customFieldsByLua } from '../shared/custom-fields';
import { hostField, portField } from '../shared/log-target';

/** Kong 3.x `tcp-log` config. */
export const tcpLogConfigSchema = z
  .object({
    host: hostField(),
    port: portField(),
    timeout: z.number().default(10_000),
    keepalive: z.number().default(60_000),
    tls: z.boolean().default(false),
    tls_sni: z.string().nullable().default(null),
    custom_fields_by_lua: customFieldsByLua,
  })
  .strict();

export type TcpLogConfig = z.infer<typeof tcpLogConfigSchema>;
