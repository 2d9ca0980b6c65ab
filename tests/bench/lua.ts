// Lua figures for `pnpm bench` (BENCH_ONLY=lua), each against a baseline measured in the same run:
//   - the cost of one call of a snippet that sets one upstream header: the same logic as a JavaScript function
//     (baseline), the gateway's sandbox (fengari, what pre-function runs), and wasmoon (Lua 5.4 in WebAssembly, the
//     other VM on the registry) calling the same JavaScript host function;
//   - a kong-pdk-style JavaScript plugin setting one header against the same logic as a native plugin (one access call);
//   - key-auth + that pre-function against key-auth alone, through data planes loaded in alternating rounds, with each
//     one's CPU time per request (target ≥ 0.85×).
import { LuaFactory } from 'wasmoon';
import { definePlugin, kongPdkPlugin, luaSandbox, newExchange, z, type PluginContext, type PluginDefinition } from '@gatehouse/plugins';
import { here, printTable, startScript, type Started } from './harness';
import { interleaved, medianRoundRatio, micros } from './interleaved';

const SNIPPET = 'kong.service.request.set_header("x-lua", "1")';

/** Nanoseconds per call of `call`, after a warm-up, over about `ms` milliseconds. */
function perCall(call: () => void, ms: number): number {
  for (let i = 0; i < 20_000; i++) call();
  let calls = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 1000; i++) call();
    calls += 1000;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / calls;
}

function fakeContext(headers: Map<string, string>): PluginContext {
  return {
    req: { method: 'GET', path: '/', headers: {}, query: new URLSearchParams(), clientIp: '127.0.0.1', scheme: 'http', readBody: async () => Buffer.alloc(0) },
    upstream: { setHeader: (n, v) => void headers.set(n, v), removeHeader: () => undefined, removeQueryArg: () => undefined, setBody: () => undefined },
    route: null, service: null, consumer: null, credential: null, anonymous: false, index: undefined, runtime: {},
  };
}

async function measureCalls(ms: number): Promise<void> {
  const headers = new Map<string, string>();
  const ctx = fakeContext(headers);
  const native = (c: PluginContext) => c.upstream.setHeader('x-lua', '1');
  const nativeNs = perCall(() => native(ctx), ms);

  const sandbox = luaSandbox();
  const chunk = sandbox.compile(SNIPPET);
  const log = { error: () => undefined };
  const fengariNs = perCall(() => void sandbox.runSnippet(chunk, newExchange(ctx, 'access', 'pre-function', log)), ms);

  const engine = await new LuaFactory().createEngine({ injectObjects: false });
  engine.global.set('kong', { service: { request: { set_header: (n: string, v: string) => void headers.set(n, v) } } });
  const fn = engine.doStringSync(`return function() ${SNIPPET} end`) as () => void;
  const wasmoonNs = perCall(() => fn(), ms);
  engine.global.close();

  console.log('\nLua: one call of a snippet setting one upstream header (ns per call; ratio = baseline / candidate)');
  for (const [name, ns] of [['JavaScript function (baseline)', nativeNs], ['fengari sandbox (pre-function)', fengariNs], ['wasmoon', wasmoonNs]] as const) {
    console.log(`  ${name.padEnd(34)} ${ns.toFixed(0).padStart(8)} ns   ${(nativeNs / ns).toFixed(4)}×`);
  }
}

/** Nanoseconds per awaited call of `call`, after a warm-up, over about `ms` milliseconds. */
async function perAsyncCall(call: () => unknown, ms: number): Promise<number> {
  for (let i = 0; i < 5000; i++) await call();
  let calls = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 200; i++) await call();
    calls += 200;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / calls;
}

class JsPdkHeader {
  async access(kong: { service: { request: { setHeader(name: string, value: string): Promise<void> } } }): Promise<void> {
    await kong.service.request.setHeader('x-js', '1');
  }
}

async function measureJsPdk(ms: number): Promise<void> {
  const ctx = fakeContext(new Map());
  const native = definePlugin<Record<string, unknown>, null>({
    name: 'native-header', priority: 0, version: '1.0.0', configSchema: z.object({}), auth: false, noConsumer: false,
    access: (c) => void c.upstream.setHeader('x-js', '1'),
  }) as PluginDefinition;
  const pdk = kongPdkPlugin('js-header', { Plugin: JsPdkHeader as never, Schema: [], Version: '1.0.0', Priority: 0 }) as PluginDefinition;
  const config = {};
  const nativeNs = await perAsyncCall(() => native.access!(ctx, config), ms);
  const pdkNs = await perAsyncCall(() => pdk.access!(ctx, config), ms);
  console.log('\nA plugin setting one upstream header: kong-pdk-style JavaScript plugin vs the same as a native plugin (ns per access call)');
  console.log(`  ${'native plugin (baseline)'.padEnd(34)} ${nativeNs.toFixed(0).padStart(8)} ns   1.0000×`);
  console.log(`  ${'kong-pdk plugin'.padEnd(34)} ${pdkNs.toFixed(0).padStart(8)} ns   ${(nativeNs / pdkNs).toFixed(4)}×`);
}

export async function benchLua(opts: { connections: number; seconds: number; apiKey: string }): Promise<void> {
  await measureCalls(Math.max(500, opts.seconds * 300));
  await measureJsPdk(Math.max(500, opts.seconds * 300));
  const upstream = await startScript(here('servers/upstream.ts'));
  const servers: Started[] = [];
  try {
    const url = `http://127.0.0.1:${upstream.port}`;
    for (const scenario of ['key-auth', 'key-auth-pre-function']) servers.push(await startScript(here('servers/dataplane-lua.ts'), { UPSTREAM_URL: url, API_KEY: opts.apiKey, SCENARIO: scenario }));
    // loaded in alternating rounds, with each data plane's CPU time per request, as the machine's load changes
    const names = ['lua: key-auth alone', 'lua: key-auth + pre-function (one header)'];
    const contenders = servers.map((s, i) => ({ name: names[i]!, url: `http://127.0.0.1:${s.port}/bench`, pid: s.child.pid!, headers: { apikey: opts.apiKey } }));
    const [base, candidate] = await interleaved(contenders, opts);
    console.log('\nkey-auth + pre-function setting one header vs key-auth alone (target ≥ 0.85×)');
    printTable([base!, candidate!], base!);
    const rounds = medianRoundRatio(candidate!.rounds, base!.rounds);
    const cpu = medianRoundRatio(candidate!.cpuRounds, base!.cpuRounds, false);
    console.log(`median round ratio ${rounds?.toFixed(2) ?? 'n/a'}×, data-plane CPU per request ratio ${cpu?.toFixed(2) ?? 'n/a'}×`);
    console.log(`data-plane CPU per request: ${micros(base!.serverCpuUs)} alone, ${micros(candidate!.serverCpuUs)} with the pre-function`);
  } finally {
    for (const s of servers) await s.stop();
    await upstream.stop();
  }
}
