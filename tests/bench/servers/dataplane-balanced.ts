// A Gatehouse data plane with key-auth whose service host is an upstream of TARGETS targets (1 to 4): the same
// upstream process reached at 127.0.0.1 … 127.0.0.4 (distinct addresses, distinct connection pools).
import { makeConsumer, makeCredential, makePlugin, makeTarget, makeUpstream } from '@gatehouse/testkit';
import { serveGateway } from './dataplane-serve';

const port = new URL(process.env.UPSTREAM_URL!).port;
const count = Number(process.env.TARGETS ?? 4);
const upstream = makeUpstream({ name: 'bench.upstream' });
const targets = Array.from({ length: count }, (_, i) => makeTarget(upstream, { target: `127.0.0.${i + 1}:${port}` }));
const consumer = makeConsumer({ username: 'bench' });

await serveGateway({
  serviceHost: 'bench.upstream',
  upstreams: [upstream],
  targets,
  consumers: [consumer],
  credentials: { keyauth_credentials: [makeCredential(consumer, { key: process.env.API_KEY ?? 'bench-key' })] },
  plugins: (serviceId) => [makePlugin({ name: 'key-auth', service: { id: serviceId }, config: {} })],
});
