// Test servers that speak LLM providers' wire formats (OpenAI's Chat Completions, Anthropic's Messages API, Cohere's
// v1 Chat, Ollama's chat API and Gemini's generateContent):
// they check the request shape field by field as the providers' API references describe it, record what they got, and
// answer with fixed texts. A streamed answer can be held after its first events until the test releases it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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

export async function startLlmStandIn(): Promise<LlmStandIn> {
  let releaseHeld: () => void = () => undefined;
  let held = new Promise<void>((resolve) => (releaseHeld = resolve));
  const state: LlmStandIn = {
    url: '',
    seen: [],
    holdStreams: false,
    release: () => releaseHeld(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
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
    if (url.searchParams.get('key') === null) return problem(res, 403, 'API key not valid');
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

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
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
