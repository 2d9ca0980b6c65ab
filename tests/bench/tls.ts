// TLS figures, each against a baseline measured in the same run:
//   (1) HTTPS with keep-alive vs plain HTTP through the same data plane (target ≥ 0.8×), in alternating rounds. The
//       load generator runs on the same two cores and pays for TLS too (its own encryption and decryption), so the
//       requests-per-second ratio understates the gateway; the target is judged on the data plane's CPU time per
//       request, which is what bounds its throughput when the load comes from elsewhere. Both are printed.
//   (2) new TLS handshakes per second (one request per connection) vs a minimal node:https forwarder (≥ 0.95×).
import { connect } from 'node:tls';
import { here, printTable, startScript } from './harness';
import { interleaved, micros } from './interleaved';

/** Connections opened, one GET each, then closed, by `concurrency` loops for `seconds`: completed exchanges per second. */
async function handshakesPerSecond(port: number, seconds: number, concurrency: number): Promise<{ rate: number; failures: number }> {
  const until = Date.now() + seconds * 1000;
  let done = 0;
  let failures = 0;
  const once = () =>
    new Promise<void>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, servername: 'bench.test', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
        socket.write('GET /bench HTTP/1.1\r\nhost: bench.test\r\nconnection: close\r\n\r\n');
      });
      let got = '';
      socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
      socket.on('close', () => {
        if (got.startsWith('HTTP/1.1 200')) done++;
        else failures++;
        resolve();
      });
      socket.on('error', () => {});
    });
  const loop = async () => {
    while (Date.now() < until) await once();
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { rate: done / ((Date.now() - started) / 1000), failures };
}

export async function measureTls(upstreamUrl: string, opts: { seconds: number; connections: number }): Promise<void> {
  const dp = await startScript(here('servers/dataplane-tls.ts'), { UPSTREAM_URL: upstreamUrl }, /LISTENING (\d+) TLS (\d+)/);
  const tlsPort = Number(/LISTENING \d+ TLS (\d+)/.exec(dp.output)![1]);
  const baseline = await startScript(here('servers/forwarder-https.ts'), { UPSTREAM_URL: upstreamUrl });
  try {
    const [plain, https] = await interleaved(
      [
        { name: 'data plane, plain HTTP keep-alive', url: `http://127.0.0.1:${dp.port}/bench`, pid: dp.child.pid! },
        { name: 'data plane, HTTPS keep-alive', url: `https://127.0.0.1:${tlsPort}/bench`, pid: dp.child.pid! },
      ],
      opts,
    );
    console.log('');
    printTable([plain!, https!], plain!);
    const rounds = (r: { rounds: number[] }) => r.rounds.map((x) => x.toFixed(0)).join(', ');
    console.log(`rounds (req/s): plain ${rounds(plain!)}; HTTPS ${rounds(https!)}`);
    console.log(
      `load generator CPU per request: plain ${micros(plain!.clientCpuUs)}, HTTPS ${micros(https!.clientCpuUs)}; ` +
        `data plane CPU per request: plain ${micros(plain!.serverCpuUs)}, HTTPS ${micros(https!.serverCpuUs)}`,
    );
    const cpuRatio = plain!.serverCpuUs !== null && https!.serverCpuUs !== null ? `${(plain!.serverCpuUs / https!.serverCpuUs).toFixed(2)}×` : 'n/a';
    console.log(
      `HTTPS keep-alive / plain HTTP through the same data plane: ${cpuRatio} by the data plane's CPU per request (target ≥ 0.80×), ` +
        `${(https!.rps / plain!.rps).toFixed(2)}× in req/s with the load generator on the same cores`,
    );

    const concurrency = Math.min(opts.connections, 16);
    await handshakesPerSecond(baseline.port, 1, concurrency); // warm-up
    const base = await handshakesPerSecond(baseline.port, opts.seconds, concurrency);
    await handshakesPerSecond(tlsPort, 1, concurrency);
    const ours = await handshakesPerSecond(tlsPort, opts.seconds, concurrency);
    console.log(
      `new TLS handshakes (one request each, ${concurrency} loops): data plane ${ours.rate.toFixed(0)}/s (${ours.failures} failed), ` +
        `node:https forwarder ${base.rate.toFixed(0)}/s (${base.failures} failed): ${(ours.rate / base.rate).toFixed(2)}× (target ≥ 0.95×)`,
    );
  } finally {
    await Promise.all([dp.stop(), baseline.stop()]);
  }
}
