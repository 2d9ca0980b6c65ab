// The stream proxy (decision 35), in both topologies: GATEHOUSE_STREAM_LISTEN with a TCP, a TLS (`ssl`) and a UDP
// listener; tcp/tls/udp/tls_passthrough routes matched on sources, destinations and snis with Kong's precedence; TLS
// terminated with a certificate of the store or passed through by SNI; balancing through an upstream; ip-restriction
// refusing a connection before it reaches the upstream. Real TCP, TLS and UDP echo servers.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePorts } from '@gatehouse/testkit';
import { CertificateFactory } from '../support/certificates';
import { cleanUp, getJson } from './support/helpers';
import { startTcpEcho, startTlsEcho, startUdpEcho, tcpExchange, tlsExchange, udpExchange, type EchoServer } from './support/stream-echo';
import { createdThrough, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const certs = new CertificateFactory();

describe.each(TOPOLOGIES)('stream proxy (%s)', (name) => {
  let topology: Topology;
  let ports: number[];
  const servers: EchoServer[] = [];
  const gatewayCert = certs.selfSigned(['stream.tls.test', 'pool.stream.test', 'reencrypt.stream.test']);
  const upstreamCert = certs.selfSigned(['upstream.stream.test']);
  /** data plane i's listeners: [tcp, tls, udp] */
  const listeners = (i: number) => ports.slice(i * 3, i * 3 + 3) as [number, number, number];

  beforeAll(async () => {
    ports = await freePorts(6);
    const [a, b, secure, udp] = await Promise.all([startTcpEcho('a'), startTcpEcho('b'), startTlsEcho('secure', upstreamCert), startUdpEcho('udp')]);
    servers.push(a!, b!, secure!, udp!);
    topology = await startTopology(name, {
      dataPlaneEnv: (i) => {
        const [tcp, tls, dgram] = listeners(i);
        return { GATEHOUSE_STREAM_LISTEN: `127.0.0.1:${tcp}, 127.0.0.1:${tls} ssl, 127.0.0.1:${dgram} udp` };
      },
    });
    const admin = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
    await admin('/certificates', { ...gatewayCert, snis: ['stream.tls.test', 'pool.stream.test', 'reencrypt.stream.test'] });
    await admin('/services', { name: 'a', url: `tcp://127.0.0.1:${a!.port}` });
    await admin('/services', { name: 'b', url: `tcp://127.0.0.1:${b!.port}` });
    await admin('/services', { name: 'secure', url: `tls://127.0.0.1:${secure!.port}` });
    await admin('/services', { name: 'secure-raw', url: `tcp://127.0.0.1:${secure!.port}` });
    await admin('/services', { name: 'udp', url: `udp://127.0.0.1:${udp!.port}` });
    await admin('/upstreams', { name: 'stream-pool' });
    await admin('/upstreams/stream-pool/targets', { target: `127.0.0.1:${a!.port}` });
    await admin('/upstreams/stream-pool/targets', { target: `127.0.0.1:${b!.port}` });
    await admin('/services', { name: 'pooled', url: 'tcp://stream-pool:80' });
    // an exact source address outranks a CIDR
    await admin('/services/b/routes', { name: 'tcp-cidr', protocols: ['tcp'], sources: [{ ip: '127.0.0.0/8' }] });
    await admin('/services/a/routes', { name: 'tcp-exact', protocols: ['tcp'], sources: [{ ip: '127.0.0.1' }] });
    await admin('/services/a/routes', { name: 'tcp-denied', protocols: ['tcp'], sources: [{ ip: '127.0.0.3' }] });
    await admin('/routes/tcp-denied/plugins', { name: 'ip-restriction', protocols: ['tcp'], config: { deny: ['127.0.0.3'] } });
    await admin('/services/a/routes', { name: 'tls-term', protocols: ['tls'], snis: ['stream.tls.test'] });
    await admin('/services/pooled/routes', { name: 'tls-pool', protocols: ['tls'], snis: ['pool.stream.test'] });
    await admin('/services/secure/routes', { name: 'tls-reencrypt', protocols: ['tls'], snis: ['reencrypt.stream.test'] });
    await admin('/services/secure-raw/routes', { name: 'passthrough', protocols: ['tls_passthrough'], snis: ['upstream.stream.test'] });
    await admin('/services/udp/routes', { name: 'udp', protocols: ['udp'], sources: [{ ip: '127.0.0.1' }] });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await cleanUp(() => topology?.stop(), ...servers.map((s) => () => s.close()), () => certs.cleanup());
  });

  it('relays TCP by source, an exact address before a CIDR, on every data plane', async () => {
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      const [tcp] = listeners(i);
      expect(await tcpExchange(tcp, 'ping')).toBe('a:ping');
      expect(await tcpExchange(tcp, 'ping', '127.0.0.2')).toBe('b:ping');
    }
  });

  it('closes a connection ip-restriction refuses, before the upstream sees it', async () => {
    expect(await tcpExchange(listeners(0)[0], 'let me in', '127.0.0.3')).toBeNull();
  });

  it('terminates TLS with the certificate of the store for the SNI, and re-encrypts to a tls service', async () => {
    const [, tls] = listeners(0);
    const plain = await tlsExchange(tls, 'hello', { servername: 'stream.tls.test', ca: gatewayCert.cert });
    expect(plain).toEqual({ reply: 'a:hello', subject: expect.any(String) });
    const again = await tlsExchange(tls, 'hi', { servername: 'reencrypt.stream.test', ca: gatewayCert.cert });
    expect(again.reply).toBe('secure:hi');
  });

  it('passes TLS through by SNI: the client sees the upstream certificate', async () => {
    const [tcp] = listeners(0);
    const through = await tlsExchange(tcp, 'raw', { servername: 'upstream.stream.test', ca: upstreamCert.cert });
    expect(through.reply).toBe('secure:raw');
  });

  it("balances connections over an upstream's targets", async () => {
    const [, tls] = listeners(0);
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add(((await tlsExchange(tls, 'x', { servername: 'pool.stream.test', ca: gatewayCert.cert })).reply ?? '').split(':')[0]!);
    expect([...seen].sort()).toEqual(['a', 'b']);
  });

  it('relays UDP datagrams and their replies', async () => {
    for (let i = 0; i < topology.dataPlanes.length; i++) expect(await udpExchange(listeners(i)[2], 'dgram')).toBe('udp:dgram');
  });

  it('counts stream connections and sessions in /status and in kong_nginx_connections_total{subsystem="stream"}', async () => {
    const dp = topology.dataPlanes[0]!;
    const [tcp, , dgram] = listeners(0);
    const before = (await getJson(`${dp.statusUrl}/status`)).stream;
    expect(await tcpExchange(tcp, 'count')).toBe('a:count');
    expect(await udpExchange(dgram, 'count')).toBe('udp:count');
    const after = (await getJson(`${dp.statusUrl}/status`)).stream;
    expect(after).toEqual({
      connections_accepted: before.connections_accepted + 2,
      connections_handled: before.connections_handled + 2,
      connections_active: expect.any(Number),
      total_requests: before.total_requests + 2,
    });
    const metrics = await (await fetch(`${dp.statusUrl}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^kong_nginx_connections_total\\{node_id="[^"]+",subsystem="stream",state="accepted"\\} ${after.connections_accepted}$`, 'm'));
    expect(metrics).toMatch(/^kong_nginx_connections_total\{node_id="[^"]+",subsystem="http",state="accepted"\} \d+$/m);
    expect(metrics).toMatch(/^kong_nginx_requests_total\{node_id="[^"]+",subsystem="stream"\} \d+$/m);
  });
});
