import type { LlmModel } from './llm-schema';

type JsonObject = Record<string, unknown>;

/** Kong's `merge_config_defaults`: the configured sampling options win over the request's. */
export function mergeModelDefaults(request: JsonObject, model: LlmModel): JsonObject {
  const options = model.options;
  return {
    ...request,
    ...(options.temperature !== null ? { temperature: options.temperature } : {}),
    ...(options.max_tokens !== null ? { max_tokens: options.max_tokens } : {}),
    ...(options.top_p !== null ? { top_p: options.top_p } : {}),
    ...(options.top_k !== null ? { top_k: options.top_k } : {}),
  };
}
