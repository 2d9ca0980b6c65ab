// Traffic-plugin scenarios for `pnpm bench` (tests/bench/traffic-plugins.ts), one data plane built from a snapshot:
//   SCENARIO=key-auth             key-auth alone
//   SCENARIO=key-auth-cors-rt     key-auth + cors + request-transformer (header operations only)
//   SCENARIO=proxy                no plugin: the upstream answered through the gateway
//   SCENARIO=proxy-cache          proxy-cache (memory strategy): after the first request every answer is a hit
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
  'key-auth-cors-rt': [
    onService('key-auth', {}),
    onService('cors', { origins: ['http://app.bench.test'], credentials: true, exposed_headers: ['X-Request-Id'] }),
    onService('request-transformer', { remove: { headers: ['x-debug'] }, add: { headers: ['x-gateway:gatehouse'] }, append: { headers: ['x-trace:bench'] } }),
  ],
  proxy: [],
  'proxy-cache': [onService('proxy-cache', { strategy: 'memory' })],
}[scenario];
if (plugins === undefined) throw new Error(`unknown SCENARIO ${scenario}`);

const snapshot = makeSnapshot({ services: [service], routes: [route], consumers: [consumer], plugins, credentials: { keyauth_credentials: [credential] } });
const holder = new ConfigHolder();
holder.swap(compile(snapshot));
const server = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0) } });
process.stdout.write(`LISTENING ${server.port}\n`);
