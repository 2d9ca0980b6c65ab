// AI scenarios for `pnpm bench` (tests/bench/ai-proxy.ts), one data plane built from a snapshot:
//   SCENARIO=proxy     no plugin: the chat request proxied to the stand-in's chat endpoint as it is
//   SCENARIO=ai-proxy  ai-proxy (openai provider, model set, upstream_url the stand-in) translating the same request
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const scenario = process.env.SCENARIO ?? 'ai-proxy';
const llmUrl = `${process.env.LLM_URL!}/v1/chat/completions`;
const service = makeService({ name: 'bench', url: llmUrl });
const route = makeRoute({ paths: ['/'], service: { id: service.id } });
const plugins = {
  proxy: [],
  'ai-proxy': [
    makePlugin({
      name: 'ai-proxy',
      service: { id: service.id },
      config: { route_type: 'llm/v1/chat', auth: { header_name: 'Authorization', header_value: 'Bearer bench' }, model: { provider: 'openai', name: 'gpt-bench', options: { upstream_url: llmUrl } } },
    }),
  ],
}[scenario];
if (plugins === undefined) throw new Error(`unknown SCENARIO ${scenario}`);

const holder = new ConfigHolder();
holder.swap(compile(makeSnapshot({ services: [service], routes: [route], plugins })));
const server = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0) } });
process.stdout.write(`LISTENING ${server.port}\n`);
