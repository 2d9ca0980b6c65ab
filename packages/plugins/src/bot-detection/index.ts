import { definePlugin } from '../contract';
import { botDetectionAccess } from './handler';
import { botDetectionConfigSchema, type BotDetectionConfig } from './schema';

/** Refuses known bots and denied user agents; Kong's priority 2500 runs it before authentication. */
export const botDetection = definePlugin<BotDetectionConfig, unknown>({
  name: 'bot-detection',
  priority: 2500,
  version: '3.9.0',
  configSchema: botDetectionConfigSchema,
  auth: false,
  noConsumer: true,
  access: botDetectionAccess,
});
