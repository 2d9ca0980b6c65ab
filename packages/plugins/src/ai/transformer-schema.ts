import { z } from 'zod';
import { compileLinearRegex, linearRegexError, type LinearRegex } from '@gatehouse/core';
import { checkLlmConfig, llmConfigSchema } from './llm-schema';
import { introspect, type CallOptions } from './llm-call';
import type { HttpClients } from '../shared/http-clients';
import type { RequestSpans } from '../shared/tracing/request-spans';

const host = z.string().nullable().default(null);
const port = z.number().int().min(0, 'value should be between 0 and 65535').max(65535, 'value should be between 0 and 65535').nullable().default(null);

/** The fields ai-request-transformer and ai-response-transformer share (Kong 3.9). */
export const transformerFields = {
  prompt: z.string(),
  transformation_extract_pattern: z
    .string()
    .superRefine((source, ctx) => {
      const error = linearRegexError(source);
      if (error !== null) ctx.addIssue({ code: 'custom', message: error });
    })
    .nullable()
    .default(null),
  http_timeout: z.number().int().default(60000),
  https_verify: z.boolean().default(true),
  max_request_body_size: z.number().int().gt(0, 'value must be greater than 0').default(8 * 1024),
  http_proxy_host: host,
  http_proxy_port: port,
  https_proxy_host: host,
  https_proxy_port: port,
  llm: llmConfigSchema,
};

interface TransformerCommon {
  prompt: string;
  llm: z.infer<typeof llmConfigSchema>;
  http_proxy_host: string | null;
  http_proxy_port: number | null;
  https_proxy_host: string | null;
  https_proxy_port: number | null;
  http_timeout: number;
  https_verify: boolean;
  transformation_extract_pattern: string | null;
}

/** Kong's entity checks for the AI transformers, with its messages. */
export function checkTransformerConfig(config: TransformerCommon): Record<string, string> | null {
  if (config.llm.route_type !== 'llm/v1/chat') return { '@entity': "'config.llm.route_type' must be 'llm/v1/chat' for AI transformer plugins" };
  if ((config.http_proxy_host === null) !== (config.http_proxy_port === null)) return { '@entity': "all or none of these fields must be set: 'config.http_proxy_host', 'config.http_proxy_port'" };
  if ((config.https_proxy_host === null) !== (config.https_proxy_port === null)) return { '@entity': "all or none of these fields must be set: 'config.https_proxy_host', 'config.https_proxy_port'" };
  const shared = checkLlmConfig(config.llm);
  return shared === null ? null : { llm: shared };
}

/** How the transformer calls its model: the forward proxy for the provider's scheme, timeout and TLS check. */
export function callOptionsOf(config: TransformerCommon): CallOptions {
  const secure = config.llm.model.options.upstream_url === null || config.llm.model.options.upstream_url.startsWith('https:');
  const proxyHost = secure ? config.https_proxy_host : config.http_proxy_host;
  const proxyPort = secure ? config.https_proxy_port : config.http_proxy_port;
  return { timeoutMs: config.http_timeout, verifyTls: config.https_verify, proxy: proxyHost !== null ? `http://${proxyHost}:${proxyPort}` : null };
}

const patterns = new WeakMap<TransformerCommon, LinearRegex | null>();
/** the extract pattern, compiled once per configuration (Kong matches it case-insensitively, `^`/`$` at line ends) */
export function extractPatternOf(config: TransformerCommon): LinearRegex | null {
  let regex = patterns.get(config);
  if (regex === undefined) {
    const source = config.transformation_extract_pattern;
    regex = source === null ? null : compileLinearRegex(`(?m)${source}`, { caseInsensitive: true });
    patterns.set(config, regex);
  }
  return regex;
}

/** The transformer's model call: `text` under the configured prompt, through the plugin's pools on this node. */
export function askModel(config: TransformerCommon, text: string, clients: HttpClients, spans: RequestSpans | null = null): Promise<string | { error: string }> {
  return introspect(config.llm, config.prompt, text, extractPatternOf(config), callOptionsOf(config), clients, spans);
}
