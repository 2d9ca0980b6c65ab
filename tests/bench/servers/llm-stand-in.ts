// An OpenAI-format chat endpoint for `pnpm bench` (tests/bench/ai-proxy.ts): POST answers a fixed chat completion;
// with `"stream": true` it sends its first chunk at once and the rest after STREAM_GAP_MS, so a client can time the
// first chunk apart from the whole answer.
import { createServer } from 'node:http';

const gap = Number(process.env.STREAM_GAP_MS ?? 20);
const answer = Buffer.from(JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', model: 'gpt-bench', choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }));
const chunk = (content: string) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', model: 'gpt-bench', choices: [{ index: 0, delta: { content } }] })}\n\n`;

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    const body = parts.length > 0 ? JSON.parse(Buffer.concat(parts).toString('utf8')) : {};
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(answer.length) });
      res.end(answer);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk('first'));
    setTimeout(() => res.end(`${chunk(' second')}data: [DONE]\n\n`), gap);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
