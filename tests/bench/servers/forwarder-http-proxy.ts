// Baseline (c): the same forwarder with http-proxy (Node's http client) instead of undici.
import { Agent, createServer } from 'node:http';
import httpProxy from 'http-proxy';

const port = Number(process.env.PORT ?? 0);
const upstream = process.env.UPSTREAM_URL!;
const keys = new Map([[process.env.API_KEY ?? 'bench-key', { consumer: 'bench' }]]);
const proxy = httpProxy.createProxyServer({ target: upstream, agent: new Agent({ keepAlive: true, maxSockets: 128 }) });
proxy.on('error', (_err, _req, res) => {
  if ('writeHead' in res && !res.headersSent) res.writeHead(502);
  res.end();
});

const server = createServer((req, res) => {
  const key = req.headers.apikey;
  const hit = typeof key === 'string' ? keys.get(key) : undefined;
  if (!hit) {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end('{"message":"Invalid authentication credentials"}');
    return;
  }
  req.headers['x-consumer-username'] = hit.consumer;
  proxy.web(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : port}\n`);
});
