import type { StreamSessionSummary } from '../contract';

/** One stream session's log entry in the shape of Kong's stream log serializer (`kong.log.serialize` in `stream`). */
export interface SerializedSession {
  session: {
    tls?: { version: string; cipher: string; client_verify: string };
    received: number;
    sent: number;
    status: number;
    server_port: number;
  };
  upstream: { received: number; sent: number };
  latencies: { kong: number; session: number };
  tries: Array<{ ip: string; port: number; balancer_latency: number; balancer_start: number }>;
  route: unknown;
  service: unknown;
  client_ip: string;
  started_at: number;
  workspace_name: string;
}

/** Serialises a finished stream session (Kong 3.9's field names; `tls` only on a terminated TLS session). */
export function serializeSession(summary: StreamSessionSummary): SerializedSession {
  const entry: SerializedSession = {
    session: { received: summary.received, sent: summary.sent, status: summary.status, server_port: summary.serverPort },
    upstream: { received: summary.upstreamReceived, sent: summary.upstreamSent },
    latencies: { kong: summary.latencies.kong, session: summary.latencies.session },
    tries: summary.upstreamTarget
      ? [{ ip: summary.upstreamTarget.host, port: summary.upstreamTarget.port, balancer_latency: 0, balancer_start: summary.startedAt }]
      : [],
    route: summary.route ?? undefined,
    service: summary.service ?? undefined,
    client_ip: summary.clientIp,
    started_at: summary.startedAt,
    workspace_name: 'default',
  };
  if (summary.tls !== null) entry.session.tls = { version: summary.tls.version, cipher: summary.tls.cipher, client_verify: 'NONE' };
  return entry;
}
