// The `peers` scenario's minimal Node forwarder: node:http as the server, an undici Pool streaming to the upstream,
// a Map key check and the two consumer headers. The smallest Node program doing the data plane's job on this route.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.env.PORT ?? 0);
const keys = new Map([[process.env.API_KEY, { id: 'c-0001', username: 'bench-user' }]]);
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate', 'host']);
const pool = new Pool(process.env.UPSTREAM_URL, { connections: 128, pipelining: 1 });

function strip(headers) {
  const out = {};
  for (const k in headers) if (!HOP.has(k)) out[k] = headers[k];
  return out;
}

const server = createServer((req, res) => {
  if (!req.url.startsWith('/api/')) {
    res.statusCode = 404;
    res.end();
    return;
  }
  const consumer = keys.get(req.headers.apikey);
  if (consumer === undefined) {
    res.statusCode = 401;
    res.end('invalid or missing apikey\n');
    return;
  }
  const headers = strip(req.headers);
  headers['x-consumer-id'] = consumer.id;
  headers['x-consumer-username'] = consumer.username;
  const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  pool.stream(
    { path: req.url, method: req.method, headers, body: hasBody ? req : null },
    ({ statusCode, headers: upstreamHeaders }) => {
      res.writeHead(statusCode, strip(upstreamHeaders));
      return res;
    },
    (err) => {
      if (!err) return;
      if (!res.headersSent) res.statusCode = 502;
      res.end('bad gateway\n');
    },
  );
});
server.keepAliveTimeout = 75_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`LISTENING ${server.address().port}\n`));
