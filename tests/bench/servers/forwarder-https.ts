// Baseline for TLS handshakes: the smallest reasonable node:https forwarder (same certificate kind as the data
// plane's default: EC P-256), undici to the upstream. Prints `LISTENING <port>`.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { selfSignedDefault } from '@gatehouse/data-plane';

const pem = await selfSignedDefault(process.env.CERT_DIR ?? mkdtempSync(join(tmpdir(), 'gatehouse-bench-https-')));
const pool = new Pool(process.env.UPSTREAM_URL!, { connections: 128, pipelining: 1 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'host']);

const server = createServer({ cert: pem.cert, key: pem.key, minVersion: 'TLSv1.2' }, (req, res) => {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
  pool.request({ method: req.method as 'GET', path: req.url!, headers, body: req.method === 'GET' || req.method === 'HEAD' ? null : req }).then(
    (up) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && v !== null && !HOP.has(k)) out[k] = v as string | string[];
      res.writeHead(up.statusCode, out);
      up.body.pipe(res);
    },
    () => {
      res.writeHead(502);
      res.end();
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
