// Stream figure: TCP throughput (MB/s) read from a source server through a data plane's TCP stream listener against
// reading it directly, in alternating rounds (BENCH_ROUNDS), 4 connections at a time. Target ≥ 0.7×.
import { connect } from 'node:net';
import { here, startScript } from './harness';

const CONNECTIONS = 4;

/** MB/s read from `port` over `connections` connections during `seconds`. */
async function megabytesPerSecond(port: number, seconds: number): Promise<number> {
  let bytes = 0;
  const started = Date.now();
  await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect({ host: '127.0.0.1', port });
          socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
          socket.on('error', () => resolve());
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, seconds * 1000);
        }),
    ),
  );
  return bytes / 1e6 / ((Date.now() - started) / 1000);
}

export async function measureStream(opts: { seconds: number; rounds: number }): Promise<void> {
  const source = await startScript(here('servers/tcp-source.ts'));
  const dp = await startScript(here('servers/dataplane-stream.ts'), { UPSTREAM_PORT: String(source.port) });
  try {
    const direct: number[] = [];
    const gateway: number[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      direct.push(await megabytesPerSecond(source.port, opts.seconds));
      gateway.push(await megabytesPerSecond(dp.port, opts.seconds));
    }
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const show = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    console.log('');
    console.log(`TCP stream, ${CONNECTIONS} connections: direct ${mean(direct).toFixed(0)} MB/s (rounds ${show(direct)}); through the data plane ${mean(gateway).toFixed(0)} MB/s (rounds ${show(gateway)})`);
    console.log(`TCP stream through the data plane / direct: ${(mean(gateway) / mean(direct)).toFixed(2)}× (target ≥ 0.70×)`);
  } finally {
    await Promise.all([dp.stop(), source.stop()]);
  }
}
