import { z } from 'zod';
import { LONG_TEXT_MAX } from '@gatehouse/core';

/** Providers Kong 3.9's LLM drivers speak to. */
export const LLM_PROVIDERS = ['openai', 'azure', 'anthropic', 'cohere', 'mistral', 'llama2', 'gemini', 'bedrock', 'huggingface'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];

export const ROUTE_TYPES = ['llm/v1/chat', 'llm/v1/completions', 'preserve'] as const;
export type RouteType = (typeof ROUTE_TYPES)[number];

const optionalText = () => z.string().nullable().default(null);

/** How the gateway authenticates to the provider (Kong's `config.auth`). */
export const authSchema = z
  .object({
    header_name: optionalText(),
    header_value: optionalText(),
    param_name: optionalText(),
    param_value: optionalText(),
    param_location: z.enum(['query', 'body']).nullable().default(null),
    gcp_use_service_account: z.boolean().default(false),
    // a service-account key file holds a PEM private key: longer than the usual string bound
    gcp_service_account_json: z.string().max(LONG_TEXT_MAX).nullable().default(null),
    aws_access_key_id: optionalText(),
    aws_secret_access_key: optionalText(),
    allow_override: z.boolean().default(false),
  })
  .strict();

const between = (min: number, max: number) => `value should be between ${min} and ${max}`;

const modelOptionsSchema = z
  .object({
    max_tokens: z.number().int().nullable().default(null),
    input_cost: z.number().gt(0, 'value must be greater than 0').nullable().default(null),
    output_cost: z.number().gt(0, 'value must be greater than 0').nullable().default(null),
    temperature: z.number().min(0, between(0, 5)).max(5, between(0, 5)).nullable().default(null),
    top_p: z.number().min(0, between(0, 1)).max(1, between(0, 1)).nullable().default(null),
    top_k: z.number().int().min(0, between(0, 500)).max(500, between(0, 500)).nullable().default(null),
    anthropic_version: optionalText(),
    azure_instance: optionalText(),
    azure_api_version: z.string().nullable().default('2023-05-15'),
    azure_deployment_id: optionalText(),
    llama2_format: z.enum(['raw', 'openai', 'ollama']).nullable().default(null),
    mistral_format: z.enum(['openai', 'ollama']).nullable().default(null),
    upstream_url: z.url({ protocol: /^https?$/, error: 'missing host in url' }).nullable().default(null),
    upstream_path: optionalText(),
    gemini: z.object({ api_endpoint: optionalText(), project_id: optionalText(), location_id: optionalText() }).strict().nullable().default(null),
    bedrock: z.object({ aws_region: optionalText() }).strict().nullable().default(null),
    huggingface: z.object({ use_cache: z.boolean().nullable().default(null), wait_for_model: z.boolean().nullable().default(null) }).strict().nullable().default(null),
  })
  .strict();

export const modelSchema = z
  .object({
    provider: z.enum(LLM_PROVIDERS),
    name: optionalText(),
    options: modelOptionsSchema.prefault({}),
  })
  .strict();

const loggingSchema = z.object({ log_statistics: z.boolean().default(false), log_payloads: z.boolean().default(false) }).strict();

/** Kong's shared LLM record (`kong.llm.schemas`), the base of ai-proxy and of the AI transformer plugins. */
export const llmFields = {
  route_type: z.enum(ROUTE_TYPES),
  auth: authSchema.prefault({}),
  model: modelSchema,
  logging: loggingSchema.prefault({}),
};

export const llmConfigSchema = z.object(llmFields).strict();
export type LlmConfig = z.infer<typeof llmConfigSchema>;
export type LlmModel = LlmConfig['model'];
export type LlmAuth = LlmConfig['auth'];

/** Kong's entity checks on the LLM record, with its messages; null when none fails. */
export function checkLlmConfig(config: LlmConfig): string | null {
  const { provider, options } = config.model;
  const auth = config.auth;
  if ((provider === 'bedrock' || provider === 'gemini') && auth.allow_override) return 'bedrock and gemini only support auth.allow_override = false';
  if ((auth.header_name === null) !== (auth.header_value === null)) return "all or none of these fields must be set: 'auth.header_name', 'auth.header_value'";
  const params = [auth.param_name, auth.param_location, auth.param_value].filter((v) => v !== null).length;
  if (params !== 0 && params !== 3) return "all or none of these fields must be set: 'auth.param_name', 'auth.param_value', 'auth.param_location'";
  const needs: Array<[boolean, string, string]> = [
    [provider === 'llama2', 'model.options.llama2_format', 'must set %s for llama2 provider'],
    [provider === 'mistral', 'model.options.mistral_format', 'must set %s for mistral provider'],
    [provider === 'anthropic', 'model.options.anthropic_version', 'must set %s for anthropic provider'],
    [provider === 'azure', 'model.options.azure_instance', 'must set %s for azure provider'],
    [provider === 'azure', 'model.options.azure_api_version', 'must set %s for azure provider'],
    [provider === 'azure', 'model.options.azure_deployment_id', 'must set %s for azure provider'],
    [provider === 'llama2', 'model.options.upstream_url', 'must set %s for self-hosted providers/models'],
  ];
  for (const [applies, field, message] of needs) {
    const key = field.slice('model.options.'.length) as keyof typeof options;
    if (applies && (options[key] === null || options[key] === undefined)) return message.replace('%s', `'${field}'`);
  }
  if (config.logging.log_statistics && config.route_type === 'llm/v1/completions' && provider === 'anthropic') {
    return `${provider} does not support statistics when route_type is ${config.route_type}`;
  }
  return null;
}
