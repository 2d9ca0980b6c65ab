// WebSocket figure: messages per second relayed by a data plane (each a 64-byte text sent and echoed back, in turn on
// each of 20 connections) against the same exchange with the echo server directly, in alternating rounds
// (BENCH_ROUNDS). Target ≥ 0.6×.
import WebSocket from 'ws';
import { here, startScript } from './harness';

const CONNECTIONS = 20;
const MESSAGE = 'x'.repeat(64);

/** Echoed messages per second over `CONNECTIONS` connections to `port` during `seconds`. */
async function messagesPerSecond(port: number, seconds: number): Promise<number> {
  const sockets = await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const socket = new WebSocket(`ws://127.0.0.1:${port}/bench`);
          socket.once('open', () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  let echoed = 0;
  const started = Date.now();
  const until = started + seconds * 1000;
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          socket.on('message', () => {
            echoed++;
            if (Date.now() < until) socket.send(MESSAGE);
            else resolve();
          });
          socket.send(MESSAGE);
        }),
    ),
  );
  const rate = echoed / ((Date.now() - started) / 1000);
  for (const socket of sockets) socket.terminate();
  return rate;
}

export async function measureWebSocket(opts: { seconds: number; rounds: number }): Promise<void> {
  const echo = await startScript(here('servers/ws-echo.ts'));
  const dp = await startScript(here('servers/dataplane-ws.ts'), { UPSTREAM_PORT: String(echo.port) });
  try {
    const direct: number[] = [];
    const gateway: number[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      direct.push(await messagesPerSecond(echo.port, opts.seconds));
      gateway.push(await messagesPerSecond(dp.port, opts.seconds));
    }
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const show = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    console.log('');
    console.log(`WebSocket echo, ${CONNECTIONS} connections: direct ${mean(direct).toFixed(0)} msg/s (rounds ${show(direct)}); through the data plane ${mean(gateway).toFixed(0)} msg/s (rounds ${show(gateway)})`);
    console.log(`WebSocket messages through the data plane / direct: ${(mean(gateway) / mean(direct)).toFixed(2)}× (target ≥ 0.60×)`);
  } finally {
    await Promise.all([dp.stop(), echo.stop()]);
  }
}
