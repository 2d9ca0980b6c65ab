import { describe, expect, it } from '@jest/globals';
import type { StreamSessionSummary } from '../contract';
import { serializeSession } from './session-serializer';

const summary: StreamSessionSummary = {
  startedAt: 1_700_000_000_000,
  clientIp: '10.0.0.9',
  serverPort: 5555,
  status: 200,
  received: 12,
  sent: 34,
  upstreamReceived: 34,
  upstreamSent: 12,
  latencies: { kong: 2, session: 40 },
  tls: null,
  route: null,
  service: null,
  upstreamTarget: { host: '10.0.0.1', port: 7000 },
};

describe('serializeSession', () => {
  it("gives Kong's stream entry, without `tls` on a plain session", () => {
    expect(serializeSession(summary)).toEqual({
      session: { received: 12, sent: 34, status: 200, server_port: 5555 },
      upstream: { received: 34, sent: 12 },
      latencies: { kong: 2, session: 40 },
      tries: [{ ip: '10.0.0.1', port: 7000, balancer_latency: 0, balancer_start: 1_700_000_000_000 }],
      route: undefined,
      service: undefined,
      client_ip: '10.0.0.9',
      started_at: 1_700_000_000_000,
      workspace_name: 'default',
    });
  });

  it('adds the TLS version and cipher of a terminated session, and no tries when no upstream was picked', () => {
    const entry = serializeSession({ ...summary, status: 403, tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' }, upstreamTarget: null });
    expect(entry.session).toEqual({ tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384', client_verify: 'NONE' }, received: 12, sent: 34, status: 403, server_port: 5555 });
    expect(entry.tries).toEqual([]);
  });
});
