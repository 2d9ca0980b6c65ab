import type { PluginContext } from '../contract';
import type { LlmConfig, LlmModel } from './llm-schema';
import type { JsonObject, LlmUsage } from './providers';
import { parseObject, usageOf } from './openai-format';

/**
 * One LLM call's analytics for the log plugins, under Kong's keys (`ai.proxy.meta`, `ai.proxy.usage`,
 * `ai.proxy.payload`): tokens as the provider counted them, cost from `model.options.input_cost`/`output_cost`
 * (per million tokens), the provider's latency. Recorded only with `logging.log_statistics` / `log_payloads`.
 */
export class LlmStatistics {
  private readonly usage: LlmUsage = {};
  private streamed = '';

  constructor(
    private readonly ctx: PluginContext,
    private readonly config: LlmConfig,
    private readonly model: LlmModel,
    private readonly request: JsonObject,
    /** when the provider was called (epoch ms) */
    private readonly startedAt: number,
  ) {}

  addUsage(usage: LlmUsage): void {
    if (usage.prompt_tokens !== undefined) this.usage.prompt_tokens = usage.prompt_tokens;
    if (usage.completion_tokens !== undefined) this.usage.completion_tokens = usage.completion_tokens;
  }

  /** a streamed chunk, kept for `log_payloads` */
  addStreamed(chunk: string): void {
    if (this.config.logging.log_payloads) this.streamed += chunk;
  }

  /**
   * the response is complete: `body` is the translated JSON body, or null for a stream; `responseModel` the model a
   * native answer names; answers the tokens the call used (prompt and completion)
   */
  finish(body: string | null, responseModel: string | null = null): number {
    const parsed = body === null ? null : parseObject(body);
    const usage = usageOf(parsed);
    if (usage) this.addUsage(usage);
    const tokens = (this.usage.prompt_tokens ?? 0) + (this.usage.completion_tokens ?? 0);
    const { log_statistics, log_payloads } = this.config.logging;
    if (!log_statistics && !log_payloads) return tokens;
    const entry: JsonObject = {};
    if (log_statistics) {
      const latency = Date.now() - this.startedAt;
      const prompt = this.usage.prompt_tokens ?? 0;
      const completion = this.usage.completion_tokens ?? 0;
      const { input_cost, output_cost } = this.model.options;
      entry.meta = {
        plugin_id: this.ctx.pluginId ?? null,
        provider_name: this.model.provider,
        request_model: this.model.name ?? 'UNSPECIFIED',
        response_model: responseModel ?? (typeof parsed?.model === 'string' ? parsed.model : (this.model.name ?? 'UNSPECIFIED')),
        llm_latency: latency,
      };
      entry.usage = {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        time_per_token: completion > 0 ? Math.round(latency / completion) : 0,
        cost: input_cost !== null && output_cost !== null ? (prompt * input_cost + completion * output_cost) / 1_000_000 : 0,
      };
    }
    if (log_payloads) entry.payload = { request: JSON.stringify(this.request), response: body ?? this.streamed };
    const ai = (this.ctx.logValues?.get('ai') as JsonObject | undefined) ?? {};
    ai.proxy = entry;
    this.ctx.logValues?.set('ai', ai);
    return tokens;
  }
}
