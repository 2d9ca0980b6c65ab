// Kong's `proxy_protocol` listen flag and `real_ip_header = proxy_protocol`, in both topologies: the plain and TLS
// proxy listeners and a TCP stream listener take PROXY protocol v1 and v2 headers; behind a trusted proxy the client
// they name is the client (X-Real-IP upstream, stream `sources`), from anyone else the socket's peer is; a connection
// without a valid header is closed. Real sockets, a real HTTP echo upstream and TCP echo servers.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { freePorts, startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { cleanUp } from './support/helpers';
import { startTcpEcho, type EchoServer } from './support/stream-echo';
import { createdThrough, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const v1 = (client: string, port = 51000) => Buffer.from(`PROXY TCP4 ${client} 127.0.0.1 ${port} 80\r\n`);

function v2(client: string): Buffer {
  const signature = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
  return Buffer.from([...signature, 0x21, 0x11, 0, 12, ...client.split('.').map(Number), 127, 0, 0, 1, 0xc7, 0x38, 0x01, 0xbb]);
}

/** Everything the server sends on `socket` until it closes ('' when it closes without a byte). */
function readAll(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    socket.once('close', () => resolve(Buffer.concat(chunks).toString()));
  });
}

function connected(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: '127.0.0.1', port, localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

const request = 'GET /pp HTTP/1.1\r\nHost: pp.test\r\nConnection: close\r\n\r\n';

/** The X-Real-IP the echo upstream received, from a raw HTTP/1.1 exchange. */
function realIpOf(response: string): string {
  const body = response.slice(response.indexOf('\r\n\r\n') + 4);
  expect(response.startsWith('HTTP/1.1 200')).toBe(true);
  return (JSON.parse(body) as { headers: Record<string, string> }).headers['x-real-ip']!;
}

/** Sends `header` then `payload` on a plain connection; the whole answer. */
async function plainExchange(port: number, header: Buffer | null, payload: string, localAddress = '127.0.0.1'): Promise<string> {
  const socket = await connected(port, localAddress);
  const answer = readAll(socket);
  socket.write(header === null ? Buffer.from(payload) : Buffer.concat([header, Buffer.from(payload)]));
  return answer;
}

describe.each(TOPOLOGIES)('PROXY protocol listeners (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let stream: number[];
  const servers: EchoServer[] = [];

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    stream = await freePorts(2);
    const [named, peer] = await Promise.all([startTcpEcho('named'), startTcpEcho('peer')]);
    servers.push(named!, peer!);
    topology = await startTopology(name, {
      proxyListenFlags: ' proxy_protocol',
      proxyTlsListenFlags: ' proxy_protocol',
      dataPlaneEnv: (i) => ({
        GATEHOUSE_TRUSTED_IPS: '127.0.0.1',
        GATEHOUSE_REAL_IP_HEADER: 'proxy_protocol',
        GATEHOUSE_STREAM_LISTEN: `127.0.0.1:${stream[i]} proxy_protocol`,
      }),
    });
    const admin = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
    await admin('/services', { name: 'echo', url: upstream.url });
    await admin('/services/echo/routes', { name: 'pp', hosts: ['pp.test'] });
    await admin('/services', { name: 'named', url: `tcp://127.0.0.1:${named!.port}` });
    await admin('/services', { name: 'peer', url: `tcp://127.0.0.1:${peer!.port}` });
    await admin('/services/named/routes', { name: 'from-named', protocols: ['tcp'], sources: [{ ip: '203.0.113.0/24' }] });
    await admin('/services/peer/routes', { name: 'from-peer', protocols: ['tcp'], sources: [{ ip: '127.0.0.0/8' }] });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await cleanUp(() => topology?.stop(), () => upstream?.close(), ...servers.map((s) => () => s.close()));
  });

  const proxyPort = (i: number) => Number(new URL(topology.dataPlanes[i]!.proxyUrl).port);

  it('takes the client from a trusted peer’s v1 and v2 headers on every data plane', async () => {
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      expect(realIpOf(await plainExchange(proxyPort(i), v1('203.0.113.7'), request))).toBe('203.0.113.7');
      expect(realIpOf(await plainExchange(proxyPort(i), v2('198.51.100.9'), request))).toBe('198.51.100.9');
    }
  });

  it('keeps the peer’s address when the header comes from an untrusted peer, or names no client', async () => {
    expect(realIpOf(await plainExchange(proxyPort(0), v1('203.0.113.7'), request, '127.0.0.2'))).toBe('127.0.0.2');
    expect(realIpOf(await plainExchange(proxyPort(0), Buffer.from('PROXY UNKNOWN\r\n'), request))).toBe('127.0.0.1');
  });

  it('closes a connection that does not open with a valid header, answering nothing', async () => {
    expect(await plainExchange(proxyPort(0), null, request)).toBe('');
    expect(await plainExchange(proxyPort(0), Buffer.from('PROXY TCP4 203.0.113.300 127.0.0.1 1 2\r\n'), request)).toBe('');
  });

  it('reads the header before the TLS handshake on the TLS listener', async () => {
    const port = Number(new URL(topology.dataPlanes[0]!.proxyTlsUrl).port);
    const raw = await connected(port);
    raw.write(v2('192.0.2.44'));
    const secure = tlsConnect({ socket: raw, servername: 'pp.test', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    const answer = readAll(secure);
    secure.once('secureConnect', () => secure.write(request));
    expect(realIpOf(await answer)).toBe('192.0.2.44');
  });

  it('matches stream routes on the client the header names, and closes a stream without one', async () => {
    for (let i = 0; i < topology.dataPlanes.length; i++) {
      const socket = await connected(stream[i]!);
      socket.write(Buffer.concat([v1('203.0.113.8'), Buffer.from('hello')]));
      const reply = await new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString())));
      socket.destroy();
      expect(reply).toBe('named:hello');
    }
    const untrusted = await connected(stream[0]!, '127.0.0.2');
    untrusted.write(Buffer.concat([v1('203.0.113.8'), Buffer.from('hi')]));
    expect(await new Promise<string>((resolve) => untrusted.once('data', (c: Buffer) => resolve(c.toString())))).toBe('peer:hi');
    untrusted.destroy();
    expect(await plainExchange(stream[0]!, null, 'no header')).toBe('');
  });
});
