// Target (d): a Gatehouse data plane serving one route with key-auth, built from a snapshot like any other.
// FORWARDER=http1 (default), undici or http-proxy selects the forwarding engine; EXTRA_CONSUMERS=<n> adds n more consumers
// with a key each (a configuration at scale, served by the same process).
import { randomUUID } from 'node:crypto';
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const service = makeService({ name: 'bench', url: process.env.UPSTREAM_URL! });
const route = makeRoute({ paths: ['/'], service: { id: service.id } });
const consumer = makeConsumer({ username: 'bench' });
const plugin = makePlugin({ name: 'key-auth', service: { id: service.id }, config: {} });
const credential = makeCredential(consumer, { key: process.env.API_KEY ?? 'bench-key' });
const consumers = [consumer];
const keys = [credential];
for (let i = 0; i < Number(process.env.EXTRA_CONSUMERS ?? 0); i++) {
  // rows as the control plane sends them (schema parsing 100,000 of them would only slow the start)
  const extra = { id: randomUUID(), username: `extra-${i}`, custom_id: null, tags: null, created_at: consumer.created_at, updated_at: consumer.updated_at };
  consumers.push(extra);
  keys.push(makeCredential(extra, { key: `extra-key-${i}-${'k'.repeat(12)}` }));
}
const snapshot = makeSnapshot({ services: [service], routes: [route], consumers, plugins: [plugin], credentials: { keyauth_credentials: keys } });

const holder = new ConfigHolder();
holder.swap(compile(snapshot));
const server = await createDataPlaneServer({
  holder,
  listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0) },
  forwarder: (process.env.FORWARDER as 'http1' | 'undici' | 'http-proxy' | undefined) ?? 'http1',
});
process.stdout.write(`LISTENING ${server.port}\n`);
