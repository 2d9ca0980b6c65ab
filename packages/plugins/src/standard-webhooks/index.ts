import { definePlugin } from '../contract';
import { standardWebhooksAccess } from './handler';
import { standardWebhooksConfigSchema, type StandardWebhooksConfig } from './schema';

/** Verifies Standard Webhooks signatures and timestamps (Kong's priority 760). */
export const standardWebhooks = definePlugin<StandardWebhooksConfig, unknown>({
  name: 'standard-webhooks',
  priority: 760,
  version: '3.9.0',
  configSchema: standardWebhooksConfigSchema,
  auth: false,
  noConsumer: true,
  access: (ctx, config) => standardWebhooksAccess(ctx, config),
});
