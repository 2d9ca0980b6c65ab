import { createRequire } from 'node:module';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface DecodedSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: number | string;
  endTimeUnixNano: number | string;
  attributes: KeyValue[];
  status?: { code?: number };
}
interface DecodedRequest {
  resourceSpans: Array<{ resource?: { attributes: KeyValue[] }; scopeSpans: Array<{ scope?: { name: string; version?: string }; spans: DecodedSpan[] }> }>;
}
interface DecodedLogRecord {
  timeUnixNano?: number | string;
  observedTimeUnixNano?: number | string;
  severityNumber?: number;
  severityText?: string;
  body?: AnyValue;
  attributes?: KeyValue[];
  flags?: number;
  traceId?: Uint8Array;
  spanId?: Uint8Array;
}
interface DecodedLogsRequest {
  resourceLogs?: Array<{ resource?: { attributes: KeyValue[] }; scopeLogs?: Array<{ scope?: { name: string; version?: string }; logRecords?: DecodedLogRecord[] }> }>;
}
interface Codec<Decoded> {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: { longs: StringConstructor; bytes: ArrayConstructor; defaults: boolean }): Decoded;
}

// the protobuf classes generated from OpenTelemetry's .proto files, shipped with the project's transformer package
const generated = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: Codec<DecodedRequest> } }; logs: { v1: { ExportLogsServiceRequest: Codec<DecodedLogsRequest> } } } } };
};
const ExportTraceServiceRequest = generated.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ExportLogsServiceRequest = generated.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

/** One span as the collector decoded it: ids in hex, attributes as plain values. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** '' for a span without parent */
  parentSpanId: string;
  name: string;
  /** OTLP numbering: 1 internal, 2 server, 3 client */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  status: number;
  resource: Record<string, string | number | boolean>;
  scope: string;
}

/** One log record as the collector decoded it: ids in hex ('' when absent), attributes as plain values. */
export interface CollectedLog {
  body: string;
  severityNumber: number;
  severityText: string;
  timeNs: bigint;
  observedNs: bigint;
  traceId: string;
  spanId: string;
  flags: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
  scope: string;
}

export interface OtlpCollector {
  /** `http://127.0.0.1:<port>/v1/traces` */
  readonly url: string;
  /** `http://127.0.0.1:<port>/v1/logs` */
  readonly logsUrl: string;
  readonly spans: CollectedSpan[];
  readonly logs: CollectedLog[];
  /** the headers of each export request */
  readonly requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

const hex = (bytes: Uint8Array | number[] | undefined) => Buffer.from(bytes ?? []).toString('hex');

function plain(attributes: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

/** Decodes an OTLP/HTTP protobuf `ExportTraceServiceRequest` into flat spans. */
export function decodeOtlpTraces(body: Uint8Array): CollectedSpan[] {
  const request = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, bytes: Array, defaults: false });
  const spans: CollectedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = plain(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name,
          kind: s.kind ?? 0,
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attributes: plain(s.attributes),
          status: s.status?.code ?? 0,
          resource,
          scope: ss.scope?.name ?? '',
        });
      }
    }
  }
  return spans;
}

/** Decodes an OTLP/HTTP protobuf `ExportLogsServiceRequest` into flat log records. */
export function decodeOtlpLogs(body: Uint8Array): CollectedLog[] {
  const request = ExportLogsServiceRequest.toObject(ExportLogsServiceRequest.decode(body), { longs: String, bytes: Array, defaults: false });
  const logs: CollectedLog[] = [];
  for (const rl of request.resourceLogs ?? []) {
    const resource = plain(rl.resource?.attributes);
    for (const sl of rl.scopeLogs ?? []) {
      for (const r of sl.logRecords ?? []) {
        logs.push({
          body: r.body?.stringValue ?? '',
          severityNumber: r.severityNumber ?? 0,
          severityText: r.severityText ?? '',
          timeNs: BigInt(r.timeUnixNano ?? 0),
          observedNs: BigInt(r.observedTimeUnixNano ?? 0),
          traceId: hex(r.traceId),
          spanId: hex(r.spanId),
          flags: r.flags ?? 0,
          attributes: plain(r.attributes),
          resource,
          scope: sl.scope?.name ?? '',
        });
      }
    }
  }
  return logs;
}

/**
 * A local OTLP/HTTP receiver: takes `POST /v1/traces` and `POST /v1/logs` protobuf bodies, decodes them with the
 * OpenTelemetry project's generated protobuf classes and keeps the spans and log records. Anything it cannot decode is
 * answered 400.
 */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const logs: CollectedLog[] = [];
  const requests: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = Buffer.concat(chunks);
        if (req.url === '/v1/logs') logs.push(...decodeOtlpLogs(body));
        else spans.push(...decodeOtlpTraces(body));
        requests.push(req.headers);
        res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' }).end();
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    logsUrl: `http://127.0.0.1:${port}/v1/logs`,
    spans,
    logs,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
