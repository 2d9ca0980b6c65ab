import { startScript, load } from './harness';
const up = await startScript('/work/main/tests/bench/servers/upstream.ts');
const url = `http://127.0.0.1:${up.port}`;
for (let round = 0; round < 2; round++)
for (const [script, env] of [['.tmp-keyauth.ts', {}], ['gatehouse-key-auth-rate-limiting.ts', { RATE_LIMIT_POLICY: 'local' }]] as const) {
  const s = await startScript(`/work/main/tests/bench/servers/${script}`, { UPSTREAM_URL: url, ...env });
  const r = await load(script, `http://127.0.0.1:${s.port}/`, { connections: 20, seconds: 4, headers: { apikey: 'bench-key' } });
  console.log(r.name, r.rps, r.p99);
  await s.stop();
}
await up.stop();
