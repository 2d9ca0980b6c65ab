import { definePlugin } from '../contract';
import { aiProxyAccess } from './handler';
import { aiProxyConfigSchema, checkAiProxyConfig, type AiProxyConfig } from './schema';

/** One OpenAI-style API in front of LLM providers (Kong's priority 770): the provider answers in the service's place. */
export const aiProxy = definePlugin<AiProxyConfig, unknown>({
  name: 'ai-proxy',
  priority: 770,
  version: '3.9.0',
  configSchema: aiProxyConfigSchema,
  checkConfig: checkAiProxyConfig,
  auth: false,
  noConsumer: false,
  access: aiProxyAccess,
});
