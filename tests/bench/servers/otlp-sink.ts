// A local OTLP/HTTP collector for `pnpm bench`. The collector is not the gateway: on a 2-core machine a collector
// that decodes every batch into objects takes CPU from the data plane it measures (about as much per request as the
// export itself), so it counts the spans of every export request by a scan of its protobuf framing (lengths and field
// numbers only) and decodes every DECODE_EVERY-th request fully (the OpenTelemetry project's protobuf classes, as the
// tests' collector does), checking that the decoded spans are as many as the scan counted and that each has ids and a
// name. `GET /count` answers the spans counted, `GET /stats` the requests, bytes, decoded requests and any mismatch.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeOtlpTraces } from '@gatehouse/testkit';

const DECODE_EVERY = 25;
let spans = 0;
let requests = 0;
let bytes = 0;
let decoded = 0;
const problems: string[] = [];

/** a varint at `at`: its value and the offset after it */
function varint(buf: Buffer, at: number): [number, number] {
  let value = 0;
  let shift = 1;
  for (;;) {
    const b = buf[at++]!;
    value += (b & 0x7f) * shift;
    if (b < 0x80) return [value, at];
    shift *= 128;
  }
}

/**
 * Calls `each` with the bounds of every length-delimited field `field` of the message in buf[from, to), skipping the
 * others by their wire type.
 */
function fields(buf: Buffer, from: number, to: number, field: number, each: (start: number, end: number) => void): void {
  let at = from;
  while (at < to) {
    const [tag, next] = varint(buf, at);
    at = next;
    const wire = tag & 7;
    if (wire === 0) at = varint(buf, at)[1];
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const [length, start] = varint(buf, at);
      at = start + length;
      if (tag >>> 3 === field) each(start, at);
    } else throw new Error(`wire type ${wire}`);
  }
  if (at !== to) throw new Error('field overruns its message');
}

/** spans in an ExportTraceServiceRequest: resource_spans (1) → scope_spans (2) → spans (2) */
function countSpans(body: Buffer): number {
  let count = 0;
  fields(body, 0, body.length, 1, (rs, rsEnd) => fields(body, rs, rsEnd, 2, (ss, ssEnd) => fields(body, ss, ssEnd, 2, () => count++)));
  return count;
}

function check(body: Buffer, counted: number): void {
  const all = decodeOtlpTraces(body);
  decoded++;
  if (all.length !== counted) problems.push(`request ${requests}: scanned ${counted} spans, decoded ${all.length}`);
  const bad = all.find((s) => s.traceId.length !== 32 || s.spanId.length !== 16 || s.name === '');
  if (bad !== undefined) problems.push(`request ${requests}: span without ids or name: ${JSON.stringify(bad.name)}`);
}

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    const stats = req.url === '/stats' ? JSON.stringify({ spans, requests, bytes, decoded, problems: problems.slice(0, 5) }) : String(spans);
    return void res.writeHead(200, { 'content-type': 'text/plain' }).end(stats);
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    requests++;
    bytes += body.length;
    try {
      const counted = countSpans(body);
      spans += counted;
      if (requests % DECODE_EVERY === 1) check(body, counted);
    } catch (err) {
      problems.push(`request ${requests}: ${err instanceof Error ? err.message : String(err)}`);
    }
    res.writeHead(200, { 'content-length': '0' }).end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`));
