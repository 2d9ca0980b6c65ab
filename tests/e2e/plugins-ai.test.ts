// The AI gateway plugins through real processes in both topologies: ai-proxy in front of local stand-ins that speak
// OpenAI's and Anthropic's wire formats (request shapes checked there), streaming relayed event by event, Kong's
// request checks and messages, token statistics in the log entries, and the prompt decorator, guard and template.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { deleteRedisPrefix, prometheusSamples, sampleValue, startEchoUpstream, uniqueRedisPrefix, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp, waitUntil } from './support/helpers';
import { proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';
import { BEDROCK_KEY_ID, BEDROCK_SECRET, startLlmStandIn, type LlmStandIn } from './support/llm-stand-ins';

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content }], ...extra });

describe.each(TOPOLOGIES)('AI gateway plugins (%s)', (name) => {
  let topology: Topology;
  let service: EchoUpstream;
  let provider: LlmStandIn;
  let dir: string;
  const redisPrefix = uniqueRedisPrefix(`e2e-ai-${name}`);
  const logFile = () => join(dir, 'ai-log.json');
  const nativeLog = () => join(dir, 'native-log.json');
  const nativeEntries = () => (existsSync(nativeLog()) ? readFileSync(nativeLog(), 'utf8').trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)) : []);

  async function adminJson(path: string, body: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${topology.adminUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  }

  async function created(path: string, body: unknown): Promise<any> {
    const res = await adminJson(path, body);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function routeWith(label: string, plugins: unknown[]): Promise<void> {
    await created('/services', { name: label, url: service.url });
    await created(`/services/${label}/routes`, { paths: [`/${label}`] });
    for (const plugin of plugins) await created(`/services/${label}/plugins`, plugin);
  }

  const openai = (extra: Record<string, unknown> = {}) => ({
    name: 'ai-proxy',
    config: {
      route_type: 'llm/v1/chat',
      auth: { header_name: 'Authorization', header_value: 'Bearer provider-secret' },
      model: { provider: 'openai', name: 'gpt-4o', options: { upstream_url: `${provider.url}/v1/chat/completions` } },
      ...extra,
    },
  });
  const anthropic = (extra: Record<string, unknown> = {}) => ({
    name: 'ai-proxy',
    config: {
      route_type: 'llm/v1/chat',
      auth: { header_name: 'x-api-key', header_value: 'anthropic-secret' },
      model: { provider: 'anthropic', name: 'claude-3-5-sonnet', options: { max_tokens: 256, anthropic_version: '2023-06-01', upstream_url: `${provider.url}/v1/messages`, input_cost: 3, output_cost: 15 } },
      logging: { log_statistics: true, log_payloads: false },
      ...extra,
    },
  });

  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    proxied(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `gh-e2e-ai-${name}-`));
    service = await startEchoUpstream();
    // a Google Cloud service account whose key pair the test makes; the stand-in's token endpoint checks its assertions
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    provider = await startLlmStandIn({ gcpPublicKey: keys.publicKey });
    const serviceAccount = JSON.stringify({ type: 'service_account', project_id: 'stand-in-project', private_key_id: 'key-1', private_key: keys.privateKey, client_email: 'gateway@stand-in-project.iam.gserviceaccount.com', token_uri: `${provider.url}/oauth2/token` });
    // the embedded node gets the shared Redis too, so token budgets with the `redis` policy are tried in both topologies
    // the provider key of the first route is a vault reference, resolved from each data plane's environment; the
    // service account and Bedrock's keys are there too, for the routes configured without them
    const dataPlaneEnv = { AI_PROVIDER_KEY: 'Bearer provider-secret', GCP_SERVICE_ACCOUNT: serviceAccount, AWS_ACCESS_KEY_ID: BEDROCK_KEY_ID, AWS_SECRET_ACCESS_KEY: BEDROCK_SECRET, AWS_SESSION_TOKEN: '', AWS_WEB_IDENTITY_TOKEN_FILE: '' };
    topology = await startTopology(name, name === 'embedded' ? { dataPlaneEnv, env: { REDIS_URL: 'redis://127.0.0.1:6379', GATEHOUSE_REDIS_PREFIX: redisPrefix, GATEHOUSE_CLUSTER_SECRET: 'e2e-ai-cluster-secret-0123456789abcdef0123' } } : { dataPlaneEnv });
    await routeWith('openai', [openai({ auth: { header_name: 'Authorization', header_value: '{vault://env/ai-provider-key}' } })]);
    await routeWith('anthropic', [anthropic(), { name: 'file-log', config: { path: logFile() } }, { name: 'prometheus', config: { ai_metrics: true } }]);
    await routeWith('nostream', [openai({ response_streaming: 'deny' })]);
    await routeWith('busy', [{ name: 'ai-proxy', config: { ...openai().config, model: { provider: 'openai', name: 'busy-model', options: { upstream_url: `${provider.url}/v1/chat/completions` } } } }]);
    await routeWith('decorated', [
      openai(),
      { name: 'ai-prompt-decorator', config: { prompts: { prepend: [{ role: 'system', content: 'Answer in French.' }], append: [{ role: 'user', content: 'Be brief.' }] } } },
      { name: 'ai-prompt-guard', config: { deny_patterns: ['.*credit card.*'] } },
      { name: 'ai-prompt-template', config: { templates: [{ name: 'greet', template: '{"messages":[{"role":"user","content":"Say hello to {{who}}"}]}' }] } },
    ]);
    const llm = { route_type: 'llm/v1/chat', auth: { header_name: 'Authorization', header_value: 'Bearer provider-secret' }, model: { provider: 'openai', name: 'gpt-4o', options: { upstream_url: `${provider.url}/v1/chat/completions` } } };
    await routeWith('reqxf', [{ name: 'ai-request-transformer', config: { prompt: 'Wrap the body', transformation_extract_pattern: '\\{.*\\}', llm } }]);
    await routeWith('resxf', [{ name: 'ai-response-transformer', config: { prompt: 'Summarise', llm } }]);
    await routeWith('resjson', [{ name: 'ai-response-transformer', config: { prompt: 'Answer with INSTRUCTIONS', parse_llm_response_json_instructions: true, llm } }]);
    await routeWith('limited', [{ name: 'key-auth' }, openai({ token_limits: { hour: 30 } })]);
    await routeWith('shared', [openai({ token_limits: { hour: 20, limit_by: 'ip', policy: 'redis' } })]);
    await routeWith('fallback', [openai({ model: { provider: 'openai', name: 'busy-model', options: { upstream_url: `${provider.url}/v1/chat/completions` } }, fallbacks: [{ model: anthropic().config.model, auth: { header_name: 'x-api-key', header_value: 'anthropic-secret' } }] })]);
    await routeWith('cohere', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', auth: { header_name: 'Authorization', header_value: 'Bearer cohere-key' }, model: { provider: 'cohere', name: 'command-r', options: { upstream_url: `${provider.url}/v1/chat` } } } }]);
    await routeWith('ollama', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', model: { provider: 'llama2', name: 'llama3', options: { llama2_format: 'ollama', upstream_url: `${provider.url}/api/chat`, temperature: 0.5 } } } }]);
    await routeWith('gemini', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', auth: { param_name: 'key', param_value: 'gemini-key', param_location: 'query' }, model: { provider: 'gemini', name: 'gemini-1.5-flash', options: { upstream_url: `${provider.url}/v1beta/models/gemini-1.5-flash:generateContent`, max_tokens: 64 } } } }]);
    await routeWith('bedrock', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', auth: { aws_access_key_id: BEDROCK_KEY_ID, aws_secret_access_key: BEDROCK_SECRET }, model: { provider: 'bedrock', name: 'amazon.nova-lite-v1', options: { upstream_url: provider.url, bedrock: { aws_region: 'eu-west-1' } } } } }]);
    const geminiModel = { provider: 'gemini', name: 'gemini-1.5-flash', options: { upstream_url: `${provider.url}/v1beta/models/gemini-1.5-flash:generateContent` } };
    await routeWith('gemini-sa', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', auth: { gcp_use_service_account: true, gcp_service_account_json: serviceAccount }, model: geminiModel } }]);
    await routeWith('gemini-sa-env', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', auth: { gcp_use_service_account: true }, model: geminiModel } }]);
    await routeWith('bedrock-env', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', model: { provider: 'bedrock', name: 'amazon.nova-lite-v1', options: { upstream_url: provider.url, bedrock: { aws_region: 'eu-west-1' } } } } }]);
    const nativeLogging = { name: 'file-log', config: { path: nativeLog() } };
    await routeWith('gemini-native', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', llm_format: 'gemini', auth: { param_name: 'key', param_value: 'gemini-key', param_location: 'query' }, model: geminiModel, logging: { log_statistics: true } } }, nativeLogging]);
    await routeWith('bedrock-native', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', llm_format: 'bedrock', auth: { aws_access_key_id: BEDROCK_KEY_ID, aws_secret_access_key: BEDROCK_SECRET }, model: { provider: 'bedrock', options: { upstream_url: provider.url, bedrock: { aws_region: 'eu-west-1' } } }, logging: { log_statistics: true } } }, nativeLogging]);
    const hf = (routeType: string) => ({ name: 'ai-proxy', config: { route_type: routeType, auth: { header_name: 'Authorization', header_value: 'Bearer hf-key' }, model: { provider: 'huggingface', name: 'tiny-model', options: { upstream_url: `${provider.url}/hf/tiny-model`, huggingface: { wait_for_model: true } } } } });
    await routeWith('hf-chat', [hf('llm/v1/chat')]);
    await routeWith('hf-text', [hf('llm/v1/completions')]);
    await routeWith('llama-raw', [{ name: 'ai-proxy', config: { route_type: 'llm/v1/chat', model: { provider: 'llama2', name: 'llama2-7b', options: { llama2_format: 'raw', upstream_url: `${provider.url}/raw/llama2` } } } }]);
    for (const [username, key] of [['ada', 'ada-key'], ['bob', 'bob-key']]) {
      await created('/consumers', { username });
      await created(`/consumers/${username}/key-auth`, { key });
    }
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => service?.close(),
      () => provider?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
      () => deleteRedisPrefix('redis://127.0.0.1:6379', redisPrefix),
    );
  });

  it('proxies an OpenAI chat request to the provider with the configured key and model, never to the service', async () => {
    for (const dp of topology.dataPlanes) {
      const before = provider.seen.length;
      const res = await post(`${dp.proxyUrl}/openai`, chat('hi there'), { authorization: 'Bearer client-key' });
      expect(res.status).toBe(200);
      expect(res.body.choices[0].message.content).toBe('echo: hi there');
      expect(res.headers.get('x-kong-llm-model')).toBe('openai/gpt-4o');
      const seen = provider.seen[before]!;
      expect(seen.path).toBe('/v1/chat/completions');
      // resolved on the data plane from {vault://env/ai-provider-key}
      expect(seen.headers.authorization).toBe('Bearer provider-secret');
      expect(seen.body).toMatchObject({ model: 'gpt-4o', stream: false, messages: [{ role: 'user', content: 'hi there' }] });
    }
  });

  it("refuses requests Kong's normalisation refuses, with its messages", async () => {
    const dp = topology.dataPlanes[0]!;
    expect((await post(`${dp.proxyUrl}/openai`, chat('x', { model: 'gpt-3.5' }))).body).toEqual({ error: { message: 'cannot use own model - must be: gpt-4o' } });
    expect((await post(`${dp.proxyUrl}/openai`, { messages: [] })).body).toEqual({ error: { message: "request body doesn't contain valid prompts" } });
    const wrongFormat = await post(`${dp.proxyUrl}/openai`, { prompt: 'complete me' });
    expect(wrongFormat.status).toBe(400);
    expect(wrongFormat.body).toEqual({ error: { message: '[llm/v1/completions] message format is not compatible with [llm/v1/chat] route type' } });
    const notJson = await proxied(`${dp.proxyUrl}/openai`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    expect(notJson.body).toEqual({ error: { message: 'content-type header does not match request body, or bad JSON formatting' } });
    expect((await post(`${dp.proxyUrl}/nostream`, chat('x', { stream: true }))).body).toEqual({ error: { message: 'response streaming is not enabled for this LLM' } });
  });

  it("passes the provider's own error answer through", async () => {
    const dp = topology.dataPlanes[0]!;
    const res = await post(`${dp.proxyUrl}/busy`, chat('x'));
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: { message: 'Rate limit reached', type: 'invalid_request_error' } });
  });

  it('translates to and from the Anthropic Messages API, and logs tokens and cost', async () => {
    for (const dp of topology.dataPlanes) {
      const before = provider.seen.length;
      const res = await post(`${dp.proxyUrl}/anthropic`, { messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'ping' }] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'chat.completion', model: 'claude-3-5-sonnet', choices: [{ index: 0, message: { role: 'assistant', content: 'echo: ping' }, finish_reason: 'end_turn' }], usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 } });
      const seen = provider.seen[before]!;
      expect(seen.headers['x-api-key']).toBe('anthropic-secret');
      expect(seen.headers['anthropic-version']).toBe('2023-06-01');
      expect(seen.body).toMatchObject({ model: 'claude-3-5-sonnet', max_tokens: 256, system: 'You are terse.', messages: [{ role: 'user', content: 'ping' }], stream: false });
    }
    await waitUntil('an ai log entry', () => existsSync(logFile()) && readFileSync(logFile(), 'utf8').includes('"ai"'));
    const entry = JSON.parse(readFileSync(logFile(), 'utf8').trim().split('\n')[0]!);
    expect(entry.ai.proxy.meta).toMatchObject({ provider_name: 'anthropic', request_model: 'claude-3-5-sonnet', response_model: 'claude-3-5-sonnet' });
    expect(entry.ai.proxy.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 6, total_tokens: 18, cost: (12 * 3 + 6 * 15) / 1_000_000 });
    // each data plane counted its one request in Kong's AI series
    const labels = { ai_provider: 'anthropic', ai_model: 'claude-3-5-sonnet', workspace: 'default' };
    for (const dp of topology.dataPlanes) {
      const scrape = async () => prometheusSamples(await (await fetch(`${dp.statusUrl}/metrics`)).text());
      await waitUntil('the AI series', async () => sampleValue(await scrape(), 'kong_ai_llm_requests_total', labels) === 1);
      const samples = await scrape();
      expect(sampleValue(samples, 'kong_ai_llm_tokens_total', { ...labels, token_type: 'prompt_tokens' })).toBe(12);
      expect(sampleValue(samples, 'kong_ai_llm_tokens_total', { ...labels, token_type: 'completion_tokens' })).toBe(6);
      expect(sampleValue(samples, 'kong_ai_llm_tokens_total', { ...labels, token_type: 'total_tokens' })).toBe(18);
      expect(sampleValue(samples, 'kong_ai_llm_cost_total', labels)).toBeCloseTo((12 * 3 + 6 * 15) / 1_000_000, 12);
      expect(sampleValue(samples, 'kong_ai_llm_provider_latency_ms_count', labels)).toBe(1);
    }
  });

  it('relays an Anthropic stream as OpenAI chunks while the provider is still sending', async () => {
    const dp = topology.dataPlanes[0]!;
    provider.holdStreams = true;
    try {
      const res = await fetch(`${dp.proxyUrl}/anthropic`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat('stream me', { stream: true })) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      // the first chunks arrive while the provider holds the rest back: nothing waits for the whole answer
      while (!text.includes('first ')) text += decoder.decode((await reader.read()).value, { stream: true });
      expect(text).not.toContain('[DONE]');
      provider.release();
      for (let part = await reader.read(); !part.done; part = await reader.read()) text += decoder.decode(part.value, { stream: true });
      const frames = text.split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice(6));
      expect(frames.at(-1)).toBe('[DONE]');
      const chunks = frames.slice(0, -1).map((f) => JSON.parse(f));
      expect(chunks[0]).toMatchObject({ id: 'msg_2', object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant', content: '' } }] });
      expect(chunks.map((c) => c.choices[0].delta.content).join('')).toBe('first echo: stream me');
    } finally {
      provider.holdStreams = false;
    }
  });

  it('decorates, guards and templates prompts before the provider sees them', async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/decorated`, { messages: '{template://greet}', properties: { who: 'Ada "the first"' } });
    expect(res.status).toBe(200);
    expect(provider.seen[before]!.body.messages).toEqual([
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'Say hello to Ada "the first"' },
      { role: 'user', content: 'Be brief.' },
    ]);
    const guarded = await post(`${dp.proxyUrl}/decorated`, chat('here is my credit card number'));
    expect(guarded.status).toBe(400);
    expect(guarded.body).toEqual({ error: { message: 'bad request' } });
    const missing = await post(`${dp.proxyUrl}/decorated`, { messages: '{template://greet}', properties: {} });
    expect(missing.body).toEqual({ error: { message: 'missing template parameters: [who]' } });
    const unknown = await post(`${dp.proxyUrl}/decorated`, { messages: '{template://nope}' });
    expect(unknown.body).toEqual({ error: { message: 'could not find template name [nope]' } });
    expect(provider.seen.length).toBe(before + 1);
  });

  it('ai-request-transformer sends the part of the model answer the extract pattern matches upstream', async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const res = await proxied(`${dp.proxyUrl}/reqxf`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
    expect(res.status).toBe(200);
    // the model (the stand-in) answered "echo: {"n":1}"; the pattern kept the JSON, which reached the service
    expect(res.body.body).toBe('{"n":1}');
    expect(provider.seen[before]!.body.messages).toEqual([{ role: 'system', content: 'Wrap the body' }, { role: 'user', content: '{"n":1}' }]);
  });

  it("ai-response-transformer replaces the service's answer with the model's, or with its instructions", async () => {
    const dp = topology.dataPlanes[0]!;
    const plain = await proxied(`${dp.proxyUrl}/resxf/thing`);
    expect(plain.status).toBe(200);
    expect(typeof plain.body).toBe('string');
    expect(plain.body.startsWith('echo: {"method":"GET","path":"/thing"')).toBe(true);
    const instructed = await proxied(`${dp.proxyUrl}/resjson`);
    expect(instructed.status).toBe(201);
    expect(instructed.headers.get('x-from-llm')).toBe('yes');
    expect(instructed.body).toBe('rewritten by the model');
  });

  it('spends tokens per consumer and answers 429 before the provider is called once they are gone', async () => {
    const dp = topology.dataPlanes[0]!;
    const ask = (key: string) => post(`${dp.proxyUrl}/limited`, chat('count me'), { apikey: key });
    const first = await ask('ada-key');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ai-ratelimit-limit-hour')).toBe('30');
    expect(first.headers.get('x-ai-ratelimit-remaining-hour')).toBe('30');
    // the stand-in's answer used 18 tokens (11 + 7)
    const second = await ask('ada-key');
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ai-ratelimit-remaining-hour')).toBe('12');
    const before = provider.seen.length;
    const refused = await ask('ada-key');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ message: 'AI token rate limit exceeded' });
    expect(refused.headers.get('x-ai-ratelimit-remaining-hour')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(provider.seen.length).toBe(before);
    // another consumer has a budget of its own
    expect((await ask('bob-key')).headers.get('x-ai-ratelimit-remaining-hour')).toBe('30');
  });

  it('shares a token budget between data planes through Redis', async () => {
    const planes = topology.dataPlanes;
    const first = await post(`${planes[0]!.proxyUrl}/shared`, chat('one'));
    expect(first.status).toBe(200);
    const second = await post(`${planes[planes.length - 1]!.proxyUrl}/shared`, chat('two'));
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ai-ratelimit-remaining-hour')).toBe('2');
    expect((await post(`${planes[0]!.proxyUrl}/shared`, chat('three'))).status).toBe(429);
  });

  it('tries the fallback provider when the first answers 429', async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/fallback`, chat('anyone there?'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-kong-llm-model')).toBe('anthropic/claude-3-5-sonnet');
    expect(res.body.choices[0].message.content).toBe('echo: anyone there?');
    expect(provider.seen.slice(before).map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/messages']);
  });

  /** the frames of a streamed answer: OpenAI chunks, then `[DONE]` */
  async function streamed(url: string, body: unknown): Promise<{ chunks: any[]; last: string }> {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const frames = (await res.text()).split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice(6));
    return { chunks: frames.slice(0, -1).map((f) => JSON.parse(f)), last: frames.at(-1)! };
  }

  it('translates to and from Cohere\'s v1 Chat API, whole and streamed', async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/cohere`, { messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'second' }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', id: 'gen-1', choices: [{ message: { role: 'assistant', content: 'echo: second' } }], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } });
    expect(provider.seen[before]!.body).toMatchObject({ model: 'command-r', message: 'second', chat_history: [{ role: 'USER', message: 'first' }, { role: 'CHATBOT', message: 'ok' }] });
    const { chunks, last } = await streamed(`${dp.proxyUrl}/cohere`, chat('stream me', { stream: true }));
    expect(last).toBe('[DONE]');
    expect(chunks[0]).toMatchObject({ id: 'gen-2', choices: [{ delta: { role: 'assistant', content: '' } }] });
    expect(chunks.map((c) => c.choices[0].delta.content).join('')).toBe('echo: stream me ');
  });

  it('translates to and from Ollama\'s chat API (llama2 provider, ollama format), whole and streamed', async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/ollama`, chat('hello llama'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'echo: hello llama' } }], usage: { prompt_tokens: 8, completion_tokens: 3, total_tokens: 11 } });
    expect(provider.seen[before]!.body).toMatchObject({ model: 'llama3', stream: false, messages: [{ role: 'user', content: 'hello llama' }], options: { temperature: 0.5 } });
    const { chunks, last } = await streamed(`${dp.proxyUrl}/ollama`, chat('stream llama', { stream: true }));
    expect(last).toBe('[DONE]');
    expect(chunks.map((c) => c.choices[0].delta.content).join('')).toBe('echo: stream llama ');
  });

  it("translates to and from Gemini's generateContent, whole and streamed", async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/gemini`, { messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'hola' }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'echo: hola' }, finish_reason: 'stop' }], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } });
    const seen = provider.seen[before]!;
    expect(seen.path).toBe('/v1beta/models/gemini-1.5-flash:generateContent?key=gemini-key');
    expect(seen.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'hola' }] }], systemInstruction: { parts: [{ text: 'Be kind.' }] }, generationConfig: { maxOutputTokens: 64 } });
    const { chunks, last } = await streamed(`${dp.proxyUrl}/gemini`, chat('stream hola', { stream: true }));
    expect(provider.seen.at(-1)!.path).toContain('alt=sse');
    expect(last).toBe('[DONE]');
    expect(chunks.map((c) => c.choices[0].delta.content).join('')).toBe('echo: stream hola ');
  });

  it("signs Bedrock Converse calls with AWS SigV4 and translates them, whole and from AWS's binary event stream", async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/bedrock`, { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi aws' }] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'echo: hi aws' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    const seen = provider.seen[before]!;
    expect(seen.path).toBe('/model/amazon.nova-lite-v1/converse');
    expect(seen.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDSTANDIN0000\/\d{8}\/eu-west-1\/bedrock\/aws4_request, /);
    expect(seen.body).toMatchObject({ system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'hi aws' }] }] });
    const { chunks, last } = await streamed(`${dp.proxyUrl}/bedrock`, chat('stream aws', { stream: true }));
    expect(provider.seen.at(-1)!.path).toBe('/model/amazon.nova-lite-v1/converse-stream');
    expect(last).toBe('[DONE]');
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('echo: stream aws ');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  it("authenticates to Gemini with a service account's OAuth2 token, from the config or GCP_SERVICE_ACCOUNT, fetched once per data plane", async () => {
    for (const dp of topology.dataPlanes) {
      for (const route of ['gemini-sa', 'gemini-sa-env', 'gemini-sa']) {
        const before = provider.seen.length;
        const res = await post(`${dp.proxyUrl}/${route}`, chat(`hola ${route}`));
        expect(res.status).toBe(200);
        expect(res.body.choices[0].message.content).toBe(`echo: hola ${route}`);
        const seen = provider.seen[before]!;
        expect(seen.path).toBe('/v1beta/models/gemini-1.5-flash:generateContent');
        expect(seen.headers.authorization).toBe(`Bearer ${provider.issuedTokens.at(-1)}`);
      }
    }
    // one token per data plane process: the account is the same, the token is kept until shortly before it expires
    expect(provider.issuedTokens.length).toBe(topology.dataPlanes.length);
  });

  it('signs Bedrock calls with the credentials in the environment when the config has none', async () => {
    for (const dp of topology.dataPlanes) {
      const before = provider.seen.length;
      const res = await post(`${dp.proxyUrl}/bedrock-env`, chat('hi env'));
      expect(res.status).toBe(200);
      expect(res.body.choices[0].message.content).toBe('echo: hi env');
      expect(provider.seen[before]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDSTANDIN0000\/\d{8}\/eu-west-1\/bedrock\/aws4_request, /);
    }
  });

  it("speaks Gemini's own format to the client with llm_format gemini, and logs its token counts", async () => {
    const dp = topology.dataPlanes[0]!;
    const native = { contents: [{ role: 'user', parts: [{ text: 'native hola' }] }], systemInstruction: { parts: [{ text: 'Be kind.' }] }, generationConfig: { maxOutputTokens: 32 } };
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/gemini-native/v1beta/models/gemini-1.5-flash:generateContent`, native);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ candidates: [{ content: { role: 'model', parts: [{ text: 'echo: native hola' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 } });
    expect(provider.seen[before]!).toMatchObject({ path: '/v1beta/models/gemini-1.5-flash:generateContent?key=gemini-key', body: native });
    await waitUntil('the native call logged', () => nativeEntries().length === 1);
    expect(nativeEntries()[0].ai.proxy).toMatchObject({ meta: { provider_name: 'gemini', request_model: 'gemini-1.5-flash' }, usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } });
    const streamedRes = await fetch(`${dp.proxyUrl}/gemini-native/v1beta/models/gemini-1.5-flash:streamGenerateContent?alt=sse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(native) });
    expect(streamedRes.status).toBe(200);
    const frames = (await streamedRes.text()).split('\r\n\r\n').filter((f) => f.startsWith('data: ')).map((f) => JSON.parse(f.slice(6)));
    expect(frames.map((f) => f.candidates[0].content.parts[0].text).join('')).toBe('echo: native hola ');
    expect(provider.seen.at(-1)!.path).toBe('/v1beta/models/gemini-1.5-flash:generateContent?alt=sse&key=gemini-key');
    await waitUntil('the native stream logged', () => nativeEntries().length === 2);
    expect(nativeEntries()[1].ai.proxy.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 2 });
  });

  it("speaks Bedrock's Converse format to the client with llm_format bedrock, whole and as AWS's event stream", async () => {
    const dp = topology.dataPlanes.at(-1)!;
    const native = { messages: [{ role: 'user', content: [{ text: 'native aws' }] }], system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 20 } };
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/bedrock-native/model/amazon.nova-lite-v1/converse`, native);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ output: { message: { role: 'assistant', content: [{ text: 'echo: native aws' }] } }, stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, metrics: { latencyMs: 5 } });
    expect(provider.seen[before]!).toMatchObject({ path: '/model/amazon.nova-lite-v1/converse', body: native });
    const streamedRes = await fetch(`${dp.proxyUrl}/bedrock-native/model/amazon.nova-lite-v1/converse-stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(native) });
    expect(streamedRes.status).toBe(200);
    expect(streamedRes.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const bytes = Buffer.from(await streamedRes.arrayBuffer()).toString('latin1');
    expect(bytes).toContain('contentBlockDelta');
    expect(bytes).toContain('"text":"native "');
    expect(provider.seen.at(-1)!.path).toBe('/model/amazon.nova-lite-v1/converse-stream');
    await waitUntil('both bedrock calls logged', () => nativeEntries().filter((e) => e.ai?.proxy?.meta?.provider_name === 'bedrock').length === 2);
    for (const entry of nativeEntries().filter((e) => e.ai.proxy.meta.provider_name === 'bedrock')) {
      expect(entry.ai.proxy).toMatchObject({ meta: { request_model: 'amazon.nova-lite-v1', response_model: 'amazon.nova-lite-v1' }, usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    }
  });

  it("translates to and from Hugging Face's Inference API, chat and text generation", async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const chatted = await post(`${dp.proxyUrl}/hf-chat`, chat('hi hf', { temperature: 0.2 }));
    expect(chatted.status).toBe(200);
    expect(chatted.body).toMatchObject({ choices: [{ index: 0, message: { content: 'echo: hi hf' } }], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } });
    expect(provider.seen[before]!).toMatchObject({ path: '/hf/tiny-model/v1/chat/completions', body: { model: 'tiny-model', options: { use_cache: false, wait_for_model: true }, parameters: { temperature: 0.2 } } });
    const generated = await post(`${dp.proxyUrl}/hf-text`, { prompt: 'once upon' });
    expect(generated.status).toBe(200);
    expect(generated.body.choices).toEqual([{ message: { content: 'echo: once upon' }, index: 0, finish_reason: 'complete' }]);
    expect(provider.seen[before + 1]!).toMatchObject({ path: '/hf/tiny-model', body: { inputs: 'once upon' } });
  });

  it("writes Llama 2's instruction prompt for the raw format and reads the reply after the last [/INST]", async () => {
    const dp = topology.dataPlanes[0]!;
    const before = provider.seen.length;
    const res = await post(`${dp.proxyUrl}/llama-raw`, { messages: [{ role: 'system', content: 'Be nice.' }, { role: 'user', content: 'hello' }] });
    expect(res.status).toBe(200);
    const inputs = '<s>[INST] <<SYS>> Be nice. <</SYS>> hello [/INST]';
    expect(provider.seen[before]!.body).toMatchObject({ inputs, parameters: { stream: false } });
    expect(res.body).toEqual({ choices: [{ message: { content: `echo of ${inputs.length} characters`, role: 'assistant' }, index: 0 }], object: 'chat.completion', usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
  });

  it("validates configurations with Kong's messages", async () => {
    const noVersion = await adminJson('/plugins', { name: 'ai-proxy', config: { route_type: 'llm/v1/chat', model: { provider: 'anthropic', name: 'claude' } } });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.fields.config['@entity']).toEqual(["must set 'model.options.anthropic_version' for anthropic provider"]);
    const badProvider = await adminJson('/plugins', { name: 'ai-proxy', config: { route_type: 'llm/v1/chat', model: { provider: 'skynet' } } });
    expect(badProvider.body.fields.config.model.provider).toMatch(/^expected one of: openai, azure, anthropic/);
    const halfAuth = await adminJson('/plugins', { name: 'ai-proxy', config: { route_type: 'llm/v1/chat', auth: { header_name: 'x' }, model: { provider: 'openai' } } });
    expect(halfAuth.body.fields.config['@entity']).toEqual(["all or none of these fields must be set: 'auth.header_name', 'auth.header_value'"]);
    const guard = await adminJson('/plugins', { name: 'ai-prompt-guard', config: {} });
    expect(guard.body.fields['@entity']).toEqual(["at least one of these fields must be non-empty: 'config.allow_patterns', 'config.deny_patterns'"]);
    const backtracking = await adminJson('/plugins', { name: 'ai-prompt-guard', config: { deny_patterns: ['(a)\\1'] } });
    expect(backtracking.status).toBe(400);
    const completions = await adminJson('/plugins', { name: 'ai-request-transformer', config: { prompt: 'p', llm: { route_type: 'llm/v1/completions', model: { provider: 'openai' } } } });
    expect(completions.body.fields['@entity']).toEqual(["'config.llm.route_type' must be 'llm/v1/chat' for AI transformer plugins"]);
    const nativeMismatch = await adminJson('/plugins', { ...openai({ llm_format: 'gemini' }) });
    expect(nativeMismatch.body.fields['@entity']).toEqual(["native llm_format 'gemini' can only be used with the 'gemini' model.provider"]);
    const noPeriod = await adminJson('/plugins', { ...openai({ token_limits: { policy: 'local' } }) });
    expect(noPeriod.body.fields.config.token_limits).toBe("at least one of these fields must be non-empty: 'minute', 'hour', 'day'");
  });
});
