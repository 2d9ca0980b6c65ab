import { definePlugin } from '../contract';
import { prometheusConfigSchema, type PrometheusConfig } from './schema';

/**
 * Switches on the per-request series of `/metrics` (kong_http_requests_total, latency histograms, bandwidth) for the
 * routes and services it applies to, and on stream routes Kong's stream series (`kong_stream_sessions_total`,
 * `kong_session_duration_ms`). The series live in the node's metrics registry (`runtime.exchangeMetrics`); this
 * plugin only says what to record; `ai_metrics` adds Kong's `ai_llm_*` series from the AI plugins' statistics.
 */
export const prometheus = definePlugin<PrometheusConfig, unknown>({
  name: 'prometheus',
  priority: 13,
  version: '3.9.0',
  configSchema: prometheusConfigSchema,
  auth: false,
  noConsumer: false,
  log: (ctx, config, summary) => {
    ctx.runtime.exchangeMetrics?.record(summary, config);
  },
  streamLog: (ctx, config, session) => {
    ctx.runtime.exchangeMetrics?.recordSession?.(session, config);
  },
});
