import { z } from 'zod';
import { customFieldsByLua } from '../shared/custom-fields';
import { hostField, portField } from '../shared/log-target';

/** Kong 3.x `udp-log` config. */
export const udpLogConfigSchema = z
  .object({
    host: hostField(),
    port: portField(),
    timeout: z.number().default(10_000),
    custom_fields_by_lua: customFieldsByLua,
  })
  .strict();

export type UdpLogConfig = z.infer<typeof udpLogConfigSchema>;
