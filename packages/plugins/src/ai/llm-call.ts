import { Agent, ProxyAgent, request as httpRequest, type Dispatcher } from 'undici';
import type { LinearRegex } from '@gatehouse/core';
import type { LlmAuth, LlmConfig } from './llm-schema';
import { formatOf, providerUrl, type JsonObject } from './providers';
import { parseObject } from './openai-format';
import type { HttpClients } from '../shared/http-clients';
import { startInternalRequest } from '../shared/tracing/internal-request';
import type { RequestSpans } from '../shared/tracing/request-spans';

/** Provider authentication (Kong's `config.auth`): a header, a query or body parameter; `sent` gives the client's for `allow_override`. */
export function authenticate(auth: LlmAuth, url: URL, headers: Record<string, string>, body: JsonObject, sent?: { header(name: string): string | undefined; query(name: string): string | null }): void {
  if (auth.header_name !== null && auth.header_value !== null) {
    const own = sent?.header(auth.header_name.toLowerCase());
    headers[auth.header_name.toLowerCase()] = auth.allow_override && own !== undefined ? own : auth.header_value;
  }
  if (auth.param_name === null || auth.param_value === null) return;
  if (auth.param_location === 'query') {
    const own = sent?.query(auth.param_name) ?? null;
    url.searchParams.set(auth.param_name, auth.allow_override && own !== null ? own : auth.param_value);
  } else if (auth.param_location === 'body' && (body[auth.param_name] === undefined || !auth.allow_override)) {
    body[auth.param_name] = auth.param_value;
  }
}

/** How a one-shot LLM call connects: timeout, TLS verification, an optional forward proxy (Kong's `http_opts`). */
export interface CallOptions {
  timeoutMs: number;
  verifyTls: boolean;
  proxy: string | null;
}

function dispatcherFor(options: CallOptions, clients: HttpClients): Dispatcher {
  return clients.get(`${options.verifyTls}|${options.proxy ?? ''}`, () => {
    const connect = { rejectUnauthorized: options.verifyTls };
    return options.proxy !== null ? new ProxyAgent({ uri: options.proxy, requestTls: connect }) : new Agent({ connect });
  });
}

/**
 * Kong's `ai_introspect_body`: `text` is sent to the configured model as the user message under `systemPrompt`, and
 * the model's answer (its first choice's message) comes back; with `extract`, only the first match of it, or an error
 * when nothing matches. Connections come from the calling plugin's pools on this node (`clients`); the call is the
 * request's `kong.internal.request` span when `spans` records HTTP clients.
 */
export async function introspect(llm: LlmConfig, systemPrompt: string, text: string, extract: LinearRegex | null, options: CallOptions, clients: HttpClients, spans: RequestSpans | null = null): Promise<string | { error: string }> {
  const format = formatOf(llm);
  if (typeof format === 'string') return { error: format };
  const request = { messages: [{ role: 'system', content: systemPrompt }, { role: 'user', content: text }], stream: false };
  const body = format.toProvider(request, llm.model, 'llm/v1/chat');
  if (typeof body === 'string') return { error: body };
  const url = providerUrl(llm, 'llm/v1/chat');
  if (url === null) return { error: `no default endpoint for provider ${llm.model.provider}: set model.options.upstream_url` };
  const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json', ...(format.headers?.(llm.model) ?? {}) };
  authenticate(llm.auth, url, headers, body);
  const payload = JSON.stringify(body);
  const signed = format.sign ? await format.sign({ url, method: 'POST', headers, body: payload }, llm.model, llm.auth) : headers;
  if (typeof signed === 'string') return { error: `failed to authenticate with the AI service: ${signed}` };
  let answer: string;
  const traced = startInternalRequest(spans, url, 'POST', signed);
  try {
    const res = await httpRequest(url, { method: 'POST', headers: signed, body: payload, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, dispatcher: dispatcherFor(options, clients) });
    answer = await res.body.text();
    traced(res.statusCode);
    if (res.statusCode > 299) return { error: `failed to introspect request with AI service: status code ${res.statusCode}` };
  } catch (err) {
    traced(null);
    return { error: `failed to introspect request with AI service: ${err instanceof Error ? err.message : String(err)}` };
  }
  const converted = format.fromProvider(answer, 'llm/v1/chat');
  if ('error' in converted) return { error: `failed to convert AI response to Kong format: ${converted.error}` };
  const choices = parseObject(converted.body)?.choices;
  const content = Array.isArray(choices) ? (choices[0] as { message?: { content?: unknown } } | undefined)?.message?.content : undefined;
  if (typeof content !== 'string') return { error: "no 'choices' in upstream AI service response" };
  if (extract === null) return content;
  const match = extract.exec(content);
  return match === null ? { error: 'AI response did not match specified regular expression' } : match;
}
