// Test servers that speak LLM providers' wire formats (OpenAI's Chat Completions, Anthropic's Messages API, Cohere's
// v1 Chat, Ollama's chat API, Gemini's generateContent, Bedrock's Converse signed with AWS Signature V4, and Hugging Face's Inference API):
// they check the request shape field by field as the providers' API references describe it, record what they got, and
// answer with fixed texts. A streamed answer can be held after its first events until the test releases it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { sigV4Problem } from './aws-sigv4';
import { ASSUMED_ROLE, WEB_IDENTITY_ROLE, expectationFor } from './aws-stand-ins';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface LlmStandIn {
  url: string;
  seen: SeenRequest[];
  /** lets a held stream finish */
  release(): void;
  /** streams wait for release() after their first events */
  holdStreams: boolean;
  close(): Promise<void>;
  /** access tokens issued by the OAuth2 token endpoint at `/oauth2/token` (Google's service-account grant) */
  issuedTokens: string[];
}

export interface LlmStandInOptions {
  /** the public key service-account assertions are verified with (PEM); without it the token endpoint refuses all */
  gcpPublicKey?: string;
  /** AWS credentials Bedrock calls may be signed with, besides BEDROCK_KEY_ID and the STS stand-in's roles */
  awsCredentials?: Array<{ keyId: string; secret: string; sessionToken?: string }>;
}

function problem(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
}

/** the text a reply carries: it repeats the last user message, so tests see what the provider received */
function replyTo(messages: any[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return `echo: ${typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content)}`;
}

/** Google's OAuth2 token endpoint for the JWT bearer grant (RFC 7523): an RS256 assertion checked with `key`. */
function tokenProblem(form: URLSearchParams, key: KeyObject | null, audience: string): string | null {
  if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return 'unsupported grant_type';
  const parts = (form.get('assertion') ?? '').split('.');
  if (parts.length !== 3 || key === null) return 'malformed assertion';
  const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
  const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
  if (header.alg !== 'RS256') return `alg ${header.alg}`;
  if (!verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2]!, 'base64url'))) return 'invalid signature';
  const now = Math.floor(Date.now() / 1000);
  if (claims.iss !== 'gateway@stand-in-project.iam.gserviceaccount.com' || claims.aud !== audience || claims.scope !== 'https://www.googleapis.com/auth/cloud-platform') return 'wrong iss, aud or scope';
  if (!(claims.exp > now && claims.iat <= now + 5 && claims.exp - claims.iat <= 3600)) return 'wrong iat or exp';
  return null;
}

export async function startLlmStandIn(options: LlmStandInOptions = {}): Promise<LlmStandIn> {
  const gcpKey = options.gcpPublicKey !== undefined ? createPublicKey(options.gcpPublicKey) : null;
  const awsKnown = [{ keyId: BEDROCK_KEY_ID, secret: BEDROCK_SECRET }, ...[ASSUMED_ROLE, WEB_IDENTITY_ROLE].map((c) => ({ keyId: c.keyId, secret: c.secret, sessionToken: c.sessionToken })), ...(options.awsCredentials ?? [])];
  let releaseHeld: () => void = () => undefined;
  let held = new Promise<void>((resolve) => (releaseHeld = resolve));
  const state: LlmStandIn = {
    url: '',
    seen: [],
    holdStreams: false,
    release: () => releaseHeld(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
    issuedTokens: [],
  };

  async function openai(req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) return problem(res, 401, 'missing bearer token');
    if (typeof body.model !== 'string' || !Array.isArray(body.messages)) return problem(res, 400, 'model and messages are required');
    if (body.model === 'busy-model') return problem(res, 429, 'Rate limit reached');
    const system = body.messages.find((m: any) => m.role === 'system')?.content;
    // a system prompt asking for instructions gets the {status, headers, body} answer ai-response-transformer reads
    const text = typeof system === 'string' && system.includes('INSTRUCTIONS') ? JSON.stringify({ status: 201, headers: { 'x-from-llm': 'yes' }, body: 'rewritten by the model' }) : replyTo(body.messages);
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: `${body.model}-2024`, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of text.split(' ')) res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: body.model, choices: [{ index: 0, delta: { content: piece } }] })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  async function anthropic(req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    if (typeof req.headers['x-api-key'] !== 'string') return problem(res, 401, 'x-api-key header is required');
    if (typeof req.headers['anthropic-version'] !== 'string') return problem(res, 400, 'anthropic-version header is required');
    if (typeof body.model !== 'string' || typeof body.max_tokens !== 'number' || !Array.isArray(body.messages)) return problem(res, 400, 'model, max_tokens and messages are required');
    if (body.messages.some((m: any) => m.role !== 'user' && m.role !== 'assistant')) return problem(res, 400, 'messages: roles must be user or assistant');
    const text = replyTo(body.messages);
    if (body.stream !== true) {
      // a model takes time to answer: the gateway's provider latency is never 0 ms here
      await new Promise((resolve) => setTimeout(resolve, 20));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 6 } }));
      return;
    }
    const event = (name: string, data: unknown) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    event('message_start', { type: 'message_start', message: { id: 'msg_2', role: 'assistant', model: body.model, usage: { input_tokens: 12, output_tokens: 1 } } });
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'first ' } });
    if (state.holdStreams) await held;
    event('ping', { type: 'ping' });
    event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: text } });
    event('content_block_stop', { type: 'content_block_stop', index: 0 });
    event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } });
    event('message_stop', { type: 'message_stop' });
    res.end();
  }

  async function cohere(req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) return problem(res, 401, 'missing bearer token');
    if (typeof body.message !== 'string' || body.messages !== undefined) return problem(res, 400, 'message is required; messages is not a Cohere v1 field');
    const history = Array.isArray(body.chat_history) ? body.chat_history : [];
    if (history.some((h: any) => (h.role !== 'USER' && h.role !== 'CHATBOT') || typeof h.message !== 'string')) return problem(res, 400, 'chat_history entries need role USER|CHATBOT and message');
    const text = `echo: ${body.message}`;
    const meta = { billed_units: { input_tokens: 9, output_tokens: 4 } };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ response_id: 'r1', text, generation_id: 'gen-1', chat_history: history, finish_reason: 'COMPLETE', meta }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/stream+json' });
    res.write(`${JSON.stringify({ is_finished: false, event_type: 'stream-start', generation_id: 'gen-2' })}\n`);
    for (const piece of text.split(' ')) res.write(`${JSON.stringify({ is_finished: false, event_type: 'text-generation', text: `${piece} ` })}\n`);
    res.end(`${JSON.stringify({ is_finished: true, event_type: 'stream-end', finish_reason: 'COMPLETE', response: { text, meta } })}\n`);
  }

  async function ollama(_req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    if (typeof body.model !== 'string' || !Array.isArray(body.messages) || typeof body.options !== 'object') return problem(res, 400, 'model, messages and options are required');
    const text = replyTo(body.messages);
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ model: body.model, created_at: '2026-11-26T00:00:00Z', message: { role: 'assistant', content: text }, done: true, prompt_eval_count: 8, eval_count: 3 }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    for (const piece of text.split(' ')) res.write(`${JSON.stringify({ model: body.model, message: { role: 'assistant', content: `${piece} ` }, done: false })}\n`);
    res.end(`${JSON.stringify({ model: body.model, done: true, prompt_eval_count: 8, eval_count: 3 })}\n`);
  }

  async function gemini(req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (url.searchParams.get('key') === null && (bearer === undefined || !state.issuedTokens.includes(bearer))) return problem(res, 403, 'API key not valid');
    if (!Array.isArray(body.contents) || body.contents.some((c: any) => (c.role !== 'user' && c.role !== 'model') || !Array.isArray(c.parts))) return problem(res, 400, 'contents need role user|model and parts');
    const last = [...body.contents].reverse().find((c: any) => c.role === 'user');
    const text = `echo: ${last?.parts?.[0]?.text ?? ''}`;
    const usageMetadata = { promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 };
    const candidate = (t: string, finishReason?: string) => ({ content: { role: 'model', parts: [{ text: t }] }, ...(finishReason ? { finishReason } : {}) });
    if (url.searchParams.get('alt') !== 'sse') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ candidates: [candidate(text, 'STOP')], usageMetadata }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const pieces = text.split(' ');
    pieces.forEach((piece, i) => res.write(`data: ${JSON.stringify({ candidates: [candidate(`${piece} `, i === pieces.length - 1 ? 'STOP' : undefined)], ...(i === pieces.length - 1 ? { usageMetadata } : {}) })}\r\n\r\n`));
    res.end();
  }

  async function bedrock(req: IncomingMessage, res: ServerResponse, body: any, raw: Buffer): Promise<void> {
    const expected = expectationFor(req, 'bedrock', awsKnown);
    const problemWithSignature = expected === null ? `unknown access key in ${String(req.headers.authorization)}` : sigV4Problem(req, raw, expected);
    if (problemWithSignature !== null) return problem(res, 403, problemWithSignature);
    if (!Array.isArray(body.messages) || body.messages.some((m: any) => (m.role !== 'user' && m.role !== 'assistant') || !Array.isArray(m.content))) return problem(res, 400, 'messages need role user|assistant and content blocks');
    const last = [...body.messages].reverse().find((m: any) => m.role === 'user');
    const text = `echo: ${last?.content?.[0]?.text ?? ''}`;
    const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
    if (!(req.url ?? '').endsWith('/converse-stream')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text }] } }, stopReason: 'end_turn', usage, metrics: { latencyMs: 5 } }));
      return;
    }
    // AWS's binary event stream, encoded by the AWS SDK's codec
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const frame = (type: string, payload: unknown) =>
      codec.encode({ headers: { ':event-type': { type: 'string', value: type }, ':message-type': { type: 'string', value: 'event' }, ':content-type': { type: 'string', value: 'application/json' } }, body: fromUtf8(JSON.stringify(payload)) });
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    res.write(frame('messageStart', { role: 'assistant' }));
    for (const piece of text.split(' ')) res.write(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: `${piece} ` } }));
    res.write(frame('contentBlockStop', { contentBlockIndex: 0 }));
    res.write(frame('messageStop', { stopReason: 'end_turn' }));
    res.end(frame('metadata', { usage, metrics: { latencyMs: 5 } }));
  }

  async function huggingface(req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) return problem(res, 401, 'missing bearer token');
    if (typeof body.parameters !== 'object' || typeof body.options !== 'object') return problem(res, 400, 'parameters and options are required');
    res.writeHead(200, { 'content-type': 'application/json' });
    if ((req.url ?? '').endsWith('/v1/chat/completions')) {
      if (!Array.isArray(body.messages)) return problem(res, 400, 'messages are required');
      res.end(JSON.stringify({ model: body.model, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: replyTo(body.messages) } }], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } }));
      return;
    }
    if (typeof body.inputs !== 'string') return problem(res, 400, 'inputs is required');
    res.end(JSON.stringify([{ generated_text: `echo: ${body.inputs}` }]));
  }

  async function llama2Raw(_req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    if (typeof body.inputs !== 'string' || typeof body.parameters !== 'object') return problem(res, 400, 'inputs and parameters are required');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [{ generated_text: `${body.inputs} echo of ${body.inputs.length} characters` }], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }));
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = null;
      const raw = Buffer.concat(chunks);
      if (req.url === '/oauth2/token') {
        const refused = tokenProblem(new URLSearchParams(raw.toString('utf8')), gcpKey, `${state.url}/oauth2/token`);
        res.writeHead(refused === null ? 200 : 400, { 'content-type': 'application/json' });
        if (refused !== null) return res.end(JSON.stringify({ error: 'invalid_grant', error_description: refused }));
        state.issuedTokens.push(`ya29.stand-in-${state.issuedTokens.length + 1}`);
        return res.end(JSON.stringify({ access_token: state.issuedTokens.at(-1), expires_in: 3599, token_type: 'Bearer' }));
      }
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return problem(res, 400, 'body is not JSON');
      }
      const path = req.url ?? '/';
      state.seen.push({ path, headers: req.headers, body });
      if (path.startsWith('/v1/chat/completions')) void openai(req, res, body);
      else if (path.startsWith('/v1/messages')) void anthropic(req, res, body);
      else if (path.startsWith('/v1/chat')) void cohere(req, res, body);
      else if (path.startsWith('/api/chat')) void ollama(req, res, body);
      else if (path.startsWith('/v1beta/models/')) void gemini(req, res, body);
      else if (path.startsWith('/model/')) void bedrock(req, res, body, raw);
      else if (path.startsWith('/hf/')) void huggingface(req, res, body);
      else if (path.startsWith('/raw/llama2')) void llama2Raw(req, res, body);
      else problem(res, 404, `no such operation ${path}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // the next hold starts closed again
  const release = state.release;
  state.release = () => {
    release();
    held = new Promise<void>((resolve) => (releaseHeld = resolve));
  };
  return state;
}

/** the secret key the Bedrock stand-in checks signatures with (its access key id is BEDROCK_KEY_ID) */
export const BEDROCK_KEY_ID = 'AKIDSTANDIN0000';
export const BEDROCK_SECRET = 'stand-in-secret-key/0123456789abcdef';

