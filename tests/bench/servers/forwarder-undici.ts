// Baseline (b): the smallest reasonable Node forwarder: a Map key check, then undici to the upstream.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.env.PORT ?? 0);
const upstream = process.env.UPSTREAM_URL!;
const keys = new Map([[process.env.API_KEY ?? 'bench-key', { consumer: 'bench' }]]);
const pool = new Pool(upstream, { connections: 128, pipelining: 1 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'host']);

const server = createServer((req, res) => {
  const key = req.headers.apikey;
  const hit = typeof key === 'string' ? keys.get(key) : undefined;
  if (!hit) {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end('{"message":"Invalid authentication credentials"}');
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
  headers['x-consumer-username'] = hit.consumer;
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
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : port}\n`);
});
