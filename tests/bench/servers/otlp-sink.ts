// A local OTLP/HTTP collector for `pnpm bench`: decodes every export request (the OpenTelemetry project's protobuf
// classes, as the tests' collector does) and counts the spans; `GET /count` answers the count.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeOtlpTraces } from '@gatehouse/testkit';

let spans = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(String(spans));
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    spans += decodeOtlpTraces(Buffer.concat(chunks)).length;
    res.writeHead(200, { 'content-length': '0' }).end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`));
