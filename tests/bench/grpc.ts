// gRPC figure: unary calls per second through a data plane (h2c listener, one gRPC route) against the same calls
// made to the echo service directly, in rounds whose order alternates (BENCH_ROUNDS). The client is @grpc/grpc-js in
// this process, `connections` calls in flight on one channel. Target ≥ 0.5×. Beside it, the same unary call as gRPC-Web
// (binary, HTTP/1.1 through undici, `connections` sockets) through the grpc-web plugin, against gRPC through the data
// plane: what the plugin's transcoding and HTTP/1.1 cost (no target in the issue).
import { Pool } from 'undici';
import { echoCaller } from '../e2e/support/grpc/echo-server';
import { closedLoopRate, here, startScript } from './harness';
import { alternatingRounds } from './interleaved';

/** Completed unary calls per second to `address` with `concurrency` calls in flight for `seconds`. */
async function callsPerSecond(address: string, seconds: number, concurrency: number): Promise<{ rate: number; failures: number }> {
  const caller = echoCaller(address);
  try {
    await caller.unary({ text: 'warm' });
    return await closedLoopRate(() => caller.unary({ text: 'bench' }), seconds, concurrency);
  } finally {
    caller.close();
  }
}

/** A gRPC-Web binary frame of gatehouse.test.Note{text: "bench"} */
const WEB_CALL = Buffer.from([0, 0, 0, 0, 7, 0x0a, 5, ...Buffer.from('bench')]);

/** Completed gRPC-Web unary calls per second through the `/web` route of the data plane at `port`. */
async function webCallsPerSecond(port: number, seconds: number, concurrency: number): Promise<{ rate: number; failures: number }> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: concurrency });
  const call = async () => {
    const res = await pool.request({ method: 'POST', path: '/web/gatehouse.test.Echo/Unary', headers: { 'content-type': 'application/grpc-web+proto' }, body: WEB_CALL });
    const body = Buffer.from(await res.body.arrayBuffer());
    // the reply ends with the trailer frame of a successful call
    if (res.statusCode !== 200 || !body.toString('latin1').includes('grpc-status:0')) throw new Error(`grpc-web call answered ${res.statusCode}`);
  };
  await call();
  try {
    return await closedLoopRate(call, seconds, concurrency);
  } finally {
    await pool.close();
  }
}

export async function measureGrpc(opts: { seconds: number; connections: number; rounds: number }): Promise<void> {
  const upstream = await startScript(here('servers/grpc-upstream.ts'));
  const dp = await startScript(here('servers/dataplane-grpc.ts'), { UPSTREAM_PORT: String(upstream.port) });
  try {
    const [a, b, c] = await alternatingRounds(
      [
        () => callsPerSecond(`127.0.0.1:${upstream.port}`, opts.seconds, opts.connections),
        () => callsPerSecond(`127.0.0.1:${dp.port}`, opts.seconds, opts.connections),
        () => webCallsPerSecond(dp.port, opts.seconds, opts.connections),
      ],
      opts.rounds,
    );
    const rates = (results: Array<{ rate: number }>) => results.map((r) => r.rate);
    const [direct, gateway, web] = [rates(a!), rates(b!), rates(c!)];
    const failures = [...a!, ...b!, ...c!].reduce((sum, r) => sum + r.failures, 0);
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const show = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    console.log('');
    console.log(`gRPC unary calls/s, ${opts.connections} in flight: direct ${mean(direct).toFixed(0)} (rounds ${show(direct)}); through the data plane ${mean(gateway).toFixed(0)} (rounds ${show(gateway)}); failures ${failures}`);
    console.log(`gRPC unary through the data plane / direct: ${(mean(gateway) / mean(direct)).toFixed(2)}× (target ≥ 0.50×)`);
    console.log(`gRPC-Web unary calls/s (HTTP/1.1, binary, grpc-web plugin): ${mean(web).toFixed(0)} (rounds ${show(web)}); / gRPC through the data plane: ${(mean(web) / mean(gateway)).toFixed(2)}×`);
  } finally {
    await Promise.all([dp.stop(), upstream.stop()]);
  }
}
