// gRPC through the gateway (decision 35), in both topologies: a real @grpc/grpc-js server and client, each streaming
// mode over h2c (the plain listener with Kong's `http2` flag) and over TLS (HTTP/2 by ALPN), trailers and statuses
// passed through, deadlines, the gateway's own answers as gRPC statuses, key-auth and rate-limiting on gRPC routes,
// and balancing over an upstream's targets.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { connect as http2Connect } from 'node:http2';
import { connect as tlsConnect } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { cleanUp } from './support/helpers';
import { createdThrough, startTopology, TOPOLOGIES, type Topology } from './support/topology';
import { echoCaller, startGrpcEcho, type EchoCaller, type GrpcEchoServer } from './support/grpc/echo-server';

/** The TLS listener's certificate as PEM (to trust it) and the name it is issued to. */
async function listenerCertificate(port: number): Promise<{ rootCert: Buffer; serverName: string }> {
  const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
  await once(socket, 'secureConnect');
  const cert = socket.getPeerCertificate();
  socket.destroy();
  const body = cert.raw.toString('base64').match(/.{1,64}/g)!.join('\n');
  const cn = cert.subject?.CN;
  return { rootCert: Buffer.from(`-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`), serverName: typeof cn === 'string' ? cn : 'localhost' };
}

describe.each(TOPOLOGIES)('gRPC proxying (%s)', (name) => {
  let topology: Topology;
  let first: GrpcEchoServer;
  let second: GrpcEchoServer;
  const callers: EchoCaller[] = [];
  /** a client through data plane `i`'s plain listener (h2c) */
  const plain = (i = 0) => {
    const caller = echoCaller(new URL(topology.dataPlanes[i]!.proxyUrl).host);
    callers.push(caller);
    return caller;
  };

  beforeAll(async () => {
    [first, second] = await Promise.all([startGrpcEcho('first'), startGrpcEcho('second')]);
    topology = await startTopology(name, { proxyListenFlags: ' http2' });
    const admin = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
    await admin('/services', { name: 'echo', url: `grpc://127.0.0.1:${first.port}` });
    await admin('/services/echo/routes', { name: 'echo', protocols: ['grpc', 'grpcs'], paths: ['/gatehouse.test.Echo/'] });
    // the same service on other hosts: with key-auth, with rate-limiting, and balanced over both servers
    await admin('/services/echo/routes', { name: 'keyed', protocols: ['grpc'], hosts: ['keyed.grpc.test'] });
    await admin('/routes/keyed/plugins', { name: 'key-auth' });
    await admin('/consumers', { username: 'grpc-user' });
    await admin('/consumers/grpc-user/key-auth', { key: 'grpc-secret' });
    await admin('/services/echo/routes', { name: 'limited', protocols: ['grpc'], hosts: ['limited.grpc.test'] });
    await admin('/routes/limited/plugins', { name: 'rate-limiting', config: { minute: 2, policy: 'local' } });
    await admin('/upstreams', { name: 'echo-pool' });
    await admin('/upstreams/echo-pool/targets', { target: `127.0.0.1:${first.port}` });
    await admin('/upstreams/echo-pool/targets', { target: `127.0.0.1:${second.port}` });
    await admin('/services', { name: 'pooled', url: 'grpc://echo-pool' });
    await admin('/services/pooled/routes', { name: 'pooled', protocols: ['grpc'], hosts: ['pooled.grpc.test'] });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    for (const caller of callers) caller.close();
    await cleanUp(
      () => topology?.stop(),
      () => first?.close(),
      () => second?.close(),
    );
  });

  it('relays a unary call over h2c through every data plane', async () => {
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      const reply = await plain(i).unary({ text: `hello-${i}` });
      expect(reply).toMatchObject({ text: `hello-${i}`, server: 'first' });
    }
  });

  it('relays server, client and bidirectional streams', async () => {
    const caller = plain();
    const streamed = await caller.serverStream({ text: 's', count: 5 });
    expect(streamed.map((n) => n.text)).toEqual(['s-0', 's-1', 's-2', 's-3', 's-4']);
    const gathered = await caller.clientStream([{ text: 'a' }, { text: 'b' }, { text: 'c' }]);
    expect(gathered).toMatchObject({ text: 'a,b,c', count: 3 });
    const echoed = await caller.bidi([{ text: 'x' }, { text: 'y' }]);
    expect(echoed.map((n) => n.text)).toEqual(['echo:x', 'echo:y']);
  });

  it('passes the upstream status, message and trailers through', async () => {
    const err = await plain().fail({ text: 'thing' });
    expect(err.code).toBe(grpc.status.NOT_FOUND);
    expect(err.details).toBe('thing not found');
    expect(err.metadata.get('x-failure-detail')).toEqual(['no thing']);
  });

  it('carries the calls over the TLS listener (HTTP/2 by ALPN)', async () => {
    const port = Number(new URL(topology.dataPlanes[0]!.proxyTlsUrl).port);
    const caller = echoCaller(`127.0.0.1:${port}`, await listenerCertificate(port));
    callers.push(caller);
    expect(await caller.unary({ text: 'secure' })).toMatchObject({ text: 'secure', server: 'first' });
    expect((await caller.bidi([{ text: 'z' }])).map((n) => n.text)).toEqual(['echo:z']);
  });

  it('ends a call past its deadline with DEADLINE_EXCEEDED and cancels it upstream', async () => {
    const before = first.cancelled;
    const err = await plain()
      .unary({ text: 'slow', delay_ms: 3000 }, {}, 300)
      .then(
        () => null,
        (e: grpc.ServiceError) => e,
      );
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    const deadline = Date.now() + 5000;
    while (first.cancelled === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(first.cancelled).toBeGreaterThan(before);
  });

  it("answers with Kong's gRPC statuses: no route → NOT_FOUND; a request that is not gRPC on a gRPC route → 415", async () => {
    const session = http2Connect(topology.dataPlanes[0]!.proxyUrl);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/other.Service/Call', 'content-type': 'application/grpc', te: 'trailers' });
      stream.end();
      const [head] = (await once(stream, 'response')) as [Record<string, string>];
      expect(head).toMatchObject({ ':status': 404, 'content-type': 'application/grpc', 'grpc-status': '5', 'grpc-message': 'no Route matched with those values' });
      stream.resume();
    } finally {
      session.close();
    }
    const res = await fetch(`${topology.dataPlanes[0]!.proxyUrl}/gatehouse.test.Echo/Unary`);
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({ message: 'Non-gRPC request matched gRPC route' });
  });

  it("runs key-auth on a gRPC route: its refusals as gRPC statuses (Kong's mapping), the consumer upstream with a key", async () => {
    const caller = plain();
    const missing = await caller.unary({ text: 'k' }, { host: 'keyed.grpc.test' }).then(() => null, (e: grpc.ServiceError) => e);
    expect(missing?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(missing?.details).toBe('No API key found in headers or querystring');
    const wrong = await caller.unary({ text: 'k' }, { host: 'keyed.grpc.test', apikey: 'nope' }).then(() => null, (e: grpc.ServiceError) => e);
    expect(wrong?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(wrong?.details).toBe('Invalid authentication credentials');
    const reply = await caller.unary({ text: 'k' }, { host: 'keyed.grpc.test', apikey: 'grpc-secret' });
    expect(reply).toMatchObject({ text: 'k', consumer: 'grpc-user' });
  });

  it('runs rate-limiting on a gRPC route: RESOURCE_EXHAUSTED past the limit', async () => {
    const caller = plain();
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      codes.push(await caller.unary({ text: 'r' }, { host: 'limited.grpc.test' }).then(() => grpc.status.OK, (e: grpc.ServiceError) => e.code));
    }
    expect(codes).toEqual([grpc.status.OK, grpc.status.OK, grpc.status.RESOURCE_EXHAUSTED]);
  });

  it("balances calls over the upstream's targets", async () => {
    const caller = plain();
    const servers = new Set<string>();
    for (let i = 0; i < 6; i++) servers.add((await caller.unary({ text: 'b' }, { host: 'pooled.grpc.test' })).server ?? '');
    expect([...servers].sort()).toEqual(['first', 'second']);
  });
});
