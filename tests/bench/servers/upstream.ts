// A small upstream for the benchmark: answers every request with a fixed JSON body.
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 0);
const body = JSON.stringify({ ok: true, service: 'bench-upstream' });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : port}\n`);
});
