import type { Registry } from 'prom-client';
import { CellCounter, CellHistogram, CounterCell, HistogramCell } from './cells';

/** Kong's buckets for `kong_ai_llm_provider_latency_ms`. */
export const AI_LLM_PROVIDER_LATENCY_BUCKETS = [250, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000, 10000, 30000, 60000];

const TOKEN_TYPES = ['prompt_tokens', 'completion_tokens', 'total_tokens'] as const;
const LABELS = ['ai_provider', 'ai_model', 'cache_status', 'vector_db', 'embeddings_provider', 'embeddings_model', 'workspace'];

/** The series of one provider and model. */
class ModelSeries {
  readonly requests: CounterCell;
  readonly cost: CounterCell;
  readonly latency: HistogramCell;
  readonly tokens: Record<(typeof TOKEN_TYPES)[number], CounterCell>;

  constructor(provider: string, model: string) {
    const labels = { ai_provider: provider, ai_model: model, cache_status: '', vector_db: '', embeddings_provider: '', embeddings_model: '', workspace: 'default' };
    this.requests = new CounterCell(labels);
    this.cost = new CounterCell(labels);
    this.latency = new HistogramCell(labels, AI_LLM_PROVIDER_LATENCY_BUCKETS);
    this.tokens = {
      prompt_tokens: new CounterCell({ ...labels, token_type: 'prompt_tokens' }),
      completion_tokens: new CounterCell({ ...labels, token_type: 'completion_tokens' }),
      total_tokens: new CounterCell({ ...labels, token_type: 'total_tokens' }),
    };
  }
}

interface AiUseCase {
  meta?: { provider_name?: unknown; request_model?: unknown; llm_latency?: unknown };
  usage?: Record<string, unknown>;
}

const positive = (value: unknown): number => (typeof value === 'number' && value > 0 ? value : 0);

/**
 * Kong's AI series of the prometheus plugin (`ai_metrics = true`, Kong's `kong_` prefix): `kong_ai_llm_requests_total`,
 * `kong_ai_llm_cost_total`, `kong_ai_llm_tokens_total` (by `token_type`) and `kong_ai_llm_provider_latency_ms`, from the `ai` section the AI plugins add
 * to a request's log values (one use case per plugin namespace, e.g. `proxy`).
 */
export class AiMetrics {
  private readonly series = new Map<string, ModelSeries>();

  constructor(registry: Registry) {
    const all = () => this.series.values();
    new CellCounter({ name: 'kong_ai_llm_requests_total', help: 'AI requests total per ai_provider in Kong', labelNames: LABELS, registers: [registry] }, function* () {
      for (const s of all()) yield s.requests;
    });
    new CellCounter({ name: 'kong_ai_llm_cost_total', help: 'AI requests cost per ai_provider/cache in Kong', labelNames: LABELS, registers: [registry] }, function* () {
      for (const s of all()) if (s.cost.value > 0) yield s.cost;
    });
    new CellCounter({ name: 'kong_ai_llm_tokens_total', help: 'AI requests cost per ai_provider/cache in Kong', labelNames: [...LABELS, 'token_type'], registers: [registry] }, function* () {
      for (const s of all()) for (const type of TOKEN_TYPES) if (s.tokens[type].value > 0) yield s.tokens[type];
    });
    new CellHistogram(
      { name: 'kong_ai_llm_provider_latency_ms', help: 'LLM response Latency for each AI plugins per ai_provider in Kong', labelNames: LABELS, buckets: AI_LLM_PROVIDER_LATENCY_BUCKETS, registers: [registry] },
      function* () {
        for (const s of all()) if (s.latency.count > 0) yield s.latency;
      },
    );
  }

  /** records every use case of one request's `ai` log section */
  record(ai: unknown): void {
    if (ai === null || typeof ai !== 'object') return;
    for (const useCase of Object.values(ai as Record<string, AiUseCase>)) {
      if (useCase === null || typeof useCase !== 'object' || useCase.meta === undefined) continue;
      const provider = typeof useCase.meta.provider_name === 'string' ? useCase.meta.provider_name : '';
      const model = typeof useCase.meta.request_model === 'string' ? useCase.meta.request_model : '';
      const key = `${provider}\u0000${model}`;
      let series = this.series.get(key);
      if (series === undefined) this.series.set(key, (series = new ModelSeries(provider, model)));
      series.requests.value++;
      series.cost.value += positive(useCase.usage?.cost);
      const latency = positive(useCase.meta.llm_latency);
      if (latency > 0) series.latency.observe(latency);
      for (const type of TOKEN_TYPES) series.tokens[type].value += positive(useCase.usage?.[type]);
    }
  }
}
