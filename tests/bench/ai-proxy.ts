// AI gateway figures for `pnpm bench` (BENCH_ONLY=ai-proxy), each against a baseline measured in the same run:
//   - an OpenAI-format chat request through ai-proxy to a local stand-in, against the same request proxied to the
//     stand-in without the plugin (target ≥ 0.8×);
//   - the time to the first streamed chunk added by the gateway: through ai-proxy minus directly, p50 (target ≤ 2 ms).
import autocannon from 'autocannon';
import { request } from 'undici';
import { here, printTable, startScript, type LoadResult } from './harness';

const BODY = JSON.stringify({ messages: [{ role: 'user', content: 'ping' }] });

async function post(name: string, url: string, opts: { connections: number; seconds: number }): Promise<LoadResult> {
  const settings = { url, method: 'POST' as const, body: BODY, headers: { 'content-type': 'application/json' }, connections: opts.connections };
  await autocannon({ ...settings, duration: 2 });
  const r = await autocannon({ ...settings, duration: opts.seconds });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx };
}

/** milliseconds to the first body chunk of a streamed chat answer, `count` requests one after another */
async function firstChunkTimes(url: string, count: number): Promise<number[]> {
  const body = JSON.stringify({ model: 'gpt-bench', messages: [{ role: 'user', content: 'ping' }], stream: true });
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for await (const _chunk of res.body) {
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      break;
    }
    await res.body.dump();
  }
  return times;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchAiProxy(opts: { connections: number; seconds: number }): Promise<void> {
  const llm = await startScript(here('servers/llm-stand-in.ts'));
  const llmUrl = `http://127.0.0.1:${llm.port}`;
  const plain = await startScript(here('servers/dataplane-ai.ts'), { LLM_URL: llmUrl, SCENARIO: 'proxy' });
  const ai = await startScript(here('servers/dataplane-ai.ts'), { LLM_URL: llmUrl, SCENARIO: 'ai-proxy' });
  try {
    const base = await post('ai: chat proxied without the plugin', `http://127.0.0.1:${plain.port}/`, opts);
    const candidate = await post('ai: chat through ai-proxy', `http://127.0.0.1:${ai.port}/`, opts);
    console.log('\nai-proxy (openai format) vs the same request proxied (target ≥ 0.8×)');
    printTable([base, candidate], base);
    const direct = median(await firstChunkTimes(`${llmUrl}/v1/chat/completions`, 200));
    const through = median(await firstChunkTimes(`http://127.0.0.1:${ai.port}/`, 200));
    console.log(`\nfirst streamed chunk, p50 of 200: direct ${direct.toFixed(2)} ms, through ai-proxy ${through.toFixed(2)} ms, added ${(through - direct).toFixed(2)} ms (target ≤ 2 ms)`);
  } finally {
    await Promise.all([ai.stop(), plain.stop(), llm.stop()]);
  }
}
