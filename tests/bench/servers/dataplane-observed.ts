// A data plane serving one route with key-auth, as dataplane-key-auth.ts, with what OBSERVE asks for:
//   none          the node's metrics registry only (no prometheus plugin, no access log)
//   prometheus    plus the prometheus plugin with every per-request flag on
//   log           plus the access log (JSON lines to ACCESS_LOG, a file), without the plugin
//   full          plus both
// PROFILE_FILE: a CPU profile of the span between two SIGUSR2 is written there (servers/profile-on-signal.ts).
import { AccessLog, compile, ConfigHolder, createDataPlaneServer, DataPlaneMetrics } from '@gatehouse/data-plane';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';
import { Registry } from 'prom-client';
import { profileOnSignal } from './profile-on-signal';

const observe = process.env.OBSERVE ?? 'none';
const service = makeService({ name: 'bench', url: process.env.UPSTREAM_URL! });
const route = makeRoute({ name: 'bench', paths: ['/'], service: { id: service.id } });
const consumer = makeConsumer({ username: 'bench' });
const plugins = [makePlugin({ name: 'key-auth', service: { id: service.id }, config: {} })];
if (observe === 'prometheus' || observe === 'full') {
  const flags = { per_consumer: true, status_code_metrics: true, latency_metrics: true, bandwidth_metrics: true, upstream_health_metrics: true };
  plugins.push(makePlugin({ name: 'prometheus', config: flags }));
}
const credential = makeCredential(consumer, { key: process.env.API_KEY ?? 'bench-key' });
const snapshot = makeSnapshot({ services: [service], routes: [route], consumers: [consumer], plugins, credentials: { keyauth_credentials: [credential] } });

const holder = new ConfigHolder();
holder.swap(compile(snapshot));
const registry = new Registry();
const metrics = new DataPlaneMetrics({ registry, nodeId: 'bench', holder });
const accessLog = observe === 'log' || observe === 'full' ? new AccessLog(process.env.ACCESS_LOG!) : null;
const server = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0) }, metrics, accessLog });
if (process.env.PROFILE_FILE) profileOnSignal(process.env.PROFILE_FILE);
process.stdout.write(`PID ${process.pid}\nLISTENING ${server.port}\n`);
