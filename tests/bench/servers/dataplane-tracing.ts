// Tracing scenarios for `pnpm bench` (tests/bench/opentelemetry.ts), one data plane built from a snapshot:
//   SCENARIO=key-auth        key-auth alone, tracing instrumentations off
//   SCENARIO=key-auth-otel   key-auth + opentelemetry, instrumentations INSTRUMENTATIONS (default `all`), sampling
//                            SAMPLING_RATE (default 1.0), exporting to COLLECTOR_URL
import { compile, ConfigHolder, createDataPlaneServer } from '@gatehouse/data-plane';
import { parseTracingInstrumentations } from '@gatehouse/plugins';
import { makeConsumer, makeCredential, makePlugin, makeRoute, makeService, makeSnapshot } from '@gatehouse/testkit';

const scenario = process.env.SCENARIO ?? 'key-auth';
const service = makeService({ name: 'bench', url: process.env.UPSTREAM_URL! });
const route = makeRoute({ paths: ['/'], service: { id: service.id } });
const consumer = makeConsumer({ username: 'bench' });
const credential = makeCredential(consumer, { key: process.env.API_KEY ?? 'bench-key' });
const onService = (name: string, config: Record<string, unknown>) => makePlugin({ name, service: { id: service.id }, config });

const traced = scenario === 'key-auth-otel';
const plugins = [onService('key-auth', {})];
if (traced) plugins.push(onService('opentelemetry', { traces_endpoint: process.env.COLLECTOR_URL!, sampling_rate: Number(process.env.SAMPLING_RATE ?? 1) }));

const snapshot = makeSnapshot({ services: [service], routes: [route], consumers: [consumer], plugins, credentials: { keyauth_credentials: [credential] } });
const holder = new ConfigHolder();
holder.swap(compile(snapshot));
const tracing = { instrumentations: parseTracingInstrumentations(traced ? (process.env.INSTRUMENTATIONS ?? 'all') : 'off'), samplingRate: 1 };
const server = await createDataPlaneServer({ holder, listen: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0) }, tracing });
process.stdout.write(`LISTENING ${server.port}\n`);
