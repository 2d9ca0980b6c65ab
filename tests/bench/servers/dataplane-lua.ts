// Lua scenarios for `pnpm bench` (tests/bench/lua.ts), one data plane built from a snapshot:
//   SCENARIO=key-auth                 key-auth alone
//   SCENARIO=key-auth-pre-function    key-auth + a pre-function whose access snippet sets one upstream header
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const scenario = process.env.SCENARIO ?? 'key-auth';
const service = makeService({ name: 'bench', url: process.env.UPSTREAM_URL! });
const route = makeRoute({ paths: ['/'], service: { id: service.id } });
const consumer = makeConsumer({ username: 'bench' });
const credential = makeCredential(consumer, { key: process.env.API_KEY ?? 'bench-key' });
const onService = (name: string, config: Record<string, unknown>) => makePlugin({ name, service: { id: service.id }, config });

const plugins = {
  'key-auth': [onService('key-auth', {})],
  'key-auth-pre-function': [onService('key-auth', {}), onService('pre-function', { access: ['kong.service.request.set_header("x-lua", "1")'] })],
}[scenario];
if (plugins === undefined) throw new Error(`unknown SCENARIO ${scenario}`);

const snapshot = makeSnapshot({ services: [service], routes: [route], consumers: [consumer], plugins, credentials: { keyauth_credentials: [credential] } });
const holder = new ConfigHolder();
holder.swap(compile(snapshot));
const server = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0) } });
process.stdout.write(`LISTENING ${server.port}\n`);
