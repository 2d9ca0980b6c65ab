// The plugins on stream sessions (decision 35), in both topologies: tcp-log, file-log and http-log on a TCP route,
// file-log on a terminated TLS route and on a route whose ip-restriction refuses the client, udp-log on a UDP route;
// each writes Kong's stream log serializer entry once the session ends. prometheus counts the sessions in Kong's
// stream series. Real TCP and UDP echo servers and real log receivers.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePorts } from '@gatehouse/testkit';
import { CertificateFactory } from '../support/certificates';
import { cleanUp, waitUntil } from './support/helpers';
import { startLineReceiver, startUdpReceiver, type LineReceiver, type MessageReceiver } from './support/log-receivers';
import { startTcpEcho, startUdpEcho, tcpExchange, tlsExchange, udpExchange, type EchoServer } from './support/stream-echo';
import { createdThrough, startTopology, TOPOLOGIES, type Topology } from './support/topology';

/** Kong 3.9's stream entry fields (kong/pdk/log.lua, `serialize` in the stream subsystem), without `tls` on plain TCP. */
const STREAM_FIELDS = ['client_ip', 'latencies', 'route', 'service', 'session', 'started_at', 'tries', 'upstream', 'workspace_name'];

type Entry = Record<string, any>;

/** An HTTP server keeping the JSON bodies it is posted. */
async function startHttpCollector(): Promise<{ port: number; bodies: Entry[]; close(): Promise<void> }> {
  const bodies: Entry[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      bodies.push(JSON.parse(body) as Entry);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const certs = new CertificateFactory();

describe.each(TOPOLOGIES)('stream plugins (%s)', (name) => {
  let topology: Topology;
  let tcpPort: number;
  let tlsPort: number;
  const gatewayCert = certs.selfSigned(['logged.tls.test']);
  let udpPort: number;
  let dir: string;
  let echo: EchoServer;
  let udpEcho: EchoServer;
  let tcpLog: LineReceiver;
  let udpLog: MessageReceiver;
  let loggly: MessageReceiver;
  let collector: Awaited<ReturnType<typeof startHttpCollector>>;
  const ids: Record<string, string> = {};
  const file = () => join(dir, 'stream.log');
  const fileEntries = (routeId: string): Entry[] => {
    let text = '';
    try {
      text = readFileSync(file(), 'utf8');
    } catch {
      return [];
    }
    return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Entry).filter((e) => e.route?.id === routeId);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `gh-e2e-stream-plugins-${name}-`));
    [tcpPort, udpPort, tlsPort] = (await freePorts(3)) as [number, number, number];
    echo = await startTcpEcho('a');
    udpEcho = await startUdpEcho('udp');
    tcpLog = await startLineReceiver();
    udpLog = await startUdpReceiver();
    loggly = await startUdpReceiver();
    collector = await startHttpCollector();
    topology = await startTopology(name, {
      dataPlanes: 1,
      dataPlaneEnv: () => ({ GATEHOUSE_STREAM_LISTEN: `127.0.0.1:${tcpPort}, 127.0.0.1:${udpPort} udp, 127.0.0.1:${tlsPort} ssl` }),
    });
    const admin = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
    ids.service = (await admin('/services', { name: 'echo', url: `tcp://127.0.0.1:${echo.port}` })).id;
    ids.udpService = (await admin('/services', { name: 'udp-echo', url: `udp://127.0.0.1:${udpEcho.port}`, read_timeout: 500 })).id;
    ids.route = (await admin('/services/echo/routes', { name: 'logged', protocols: ['tcp'], sources: [{ ip: '127.0.0.1' }] })).id;
    ids.refused = (await admin('/services/echo/routes', { name: 'refused', protocols: ['tcp'], sources: [{ ip: '127.0.0.3' }] })).id;
    await admin('/certificates', { ...gatewayCert, snis: ['logged.tls.test'] });
    ids.tlsRoute = (await admin('/services/echo/routes', { name: 'tls-logged', protocols: ['tls'], snis: ['logged.tls.test'] })).id;
    ids.udpRoute = (await admin('/services/udp-echo/routes', { name: 'udp-logged', protocols: ['udp'], sources: [{ ip: '127.0.0.1' }] })).id;
    await admin('/routes/logged/plugins', { name: 'tcp-log', protocols: ['tcp'], config: { host: '127.0.0.1', port: tcpLog.port } });
    await admin('/routes/logged/plugins', { name: 'http-log', protocols: ['tcp'], config: { http_endpoint: `http://127.0.0.1:${collector.port}/logs` } });
    await admin('/routes/logged/plugins', { name: 'loggly', protocols: ['tcp'], config: { host: '127.0.0.1', port: loggly.port, key: 'stream-token', tags: ['edge'] } });
    // a global file-log for every stream protocol but udp, and one for HTTP only that a stream session never runs
    await admin('/plugins', { name: 'file-log', protocols: ['tcp', 'tls'], config: { path: file() } });
    await admin('/services/udp-echo/plugins', { name: 'file-log', protocols: ['http', 'https'], config: { path: file() } });
    await admin('/routes/refused/plugins', { name: 'ip-restriction', protocols: ['tcp'], config: { deny: ['127.0.0.3'] } });
    await admin('/routes/udp-logged/plugins', { name: 'udp-log', protocols: ['udp'], config: { host: '127.0.0.1', port: udpLog.port } });
    await admin('/services/echo/plugins', { name: 'prometheus', protocols: ['tcp'], config: { status_code_metrics: true, latency_metrics: true } });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => echo?.close(),
      () => udpEcho?.close(),
      () => tcpLog?.close(),
      () => udpLog?.close(),
      () => loggly?.close(),
      () => collector?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
      () => certs.cleanup(),
    );
  });

  const expectRelayedEntry = (entry: Entry) => {
    expect(Object.keys(entry).sort()).toEqual(STREAM_FIELDS);
    expect(entry.session).toEqual({ received: 4, sent: 6, status: 200, server_port: tcpPort });
    expect(entry.upstream).toEqual({ received: 6, sent: 4 });
    expect(entry.route.id).toBe(ids.route);
    expect(entry.service.id).toBe(ids.service);
    expect(entry.client_ip).toBe('127.0.0.1');
    expect(entry.tries).toEqual([{ ip: '127.0.0.1', port: echo.port, balancer_latency: 0, balancer_start: entry.started_at }]);
    expect(entry.latencies).toEqual({ kong: expect.any(Number), session: expect.any(Number) });
    expect(entry.workspace_name).toBe('default');
  };

  it('tcp-log, file-log, http-log and loggly write the stream entry of a TCP session once it ends', async () => {
    expect(await tcpExchange(tcpPort, 'ping')).toBe('a:ping');
    const sent = () => tcpLog.lines.map((l) => JSON.parse(l) as Entry).filter((e) => e.route?.id === ids.route);
    await waitUntil('the tcp-log line', () => sent().length === 1);
    await waitUntil('the file-log line', () => fileEntries(ids.route!).length === 1);
    await waitUntil('the http-log body', () => collector.bodies.length === 1);
    await waitUntil('the loggly datagram', () => loggly.messages.length === 1);
    expectRelayedEntry(sent()[0]!);
    expectRelayedEntry(fileEntries(ids.route!)[0]!);
    expectRelayedEntry(collector.bodies[0]!);
    // Loggly's syslog line: a relayed session (200) at the default successful_severity `info` of facility user (8 + 6)
    const line = /^<14>1 \S+ \S+ kong - - \[stream-token@41058 tag="edge"\] (\{.*\})$/.exec(loggly.messages[0]!);
    expect(line).not.toBeNull();
    expectRelayedEntry(JSON.parse(line![1]!) as Entry);
  });

  it('file-log writes the TLS version and cipher of a terminated TLS session', async () => {
    const { reply } = await tlsExchange(tlsPort, 'secret', { servername: 'logged.tls.test', ca: gatewayCert.cert });
    expect(reply).toBe('a:secret');
    await waitUntil('the TLS session line', () => fileEntries(ids.tlsRoute!).length === 1);
    const entry = fileEntries(ids.tlsRoute!)[0]!;
    expect(Object.keys(entry).sort()).toEqual(STREAM_FIELDS);
    expect(entry.session).toEqual({ tls: { version: expect.stringMatching(/^TLSv1\.[23]$/), cipher: expect.any(String), client_verify: 'NONE' }, received: 6, sent: 8, status: 200, server_port: tlsPort });
    expect(entry.upstream).toEqual({ received: 8, sent: 6 });
  });

  it('logs a session ip-restriction refuses with status 403 and nothing sent upstream', async () => {
    expect(await tcpExchange(tcpPort, 'let me in', '127.0.0.3')).toBeNull();
    await waitUntil('the refused session line', () => fileEntries(ids.refused!).length === 1);
    const entry = fileEntries(ids.refused!)[0]!;
    expect(entry.session).toEqual({ received: 0, sent: 0, status: 403, server_port: tcpPort });
    expect(entry.upstream).toEqual({ received: 0, sent: 0 });
    expect(entry.tries).toEqual([]);
    expect(entry.client_ip).toBe('127.0.0.3');
  });

  it('udp-log sends the stream entry of a UDP session once it is idle past the read timeout; an HTTP-only file-log stays out', async () => {
    expect(await udpExchange(udpPort, 'dgram')).toBe('udp:dgram');
    const sent = () => udpLog.messages.map((m) => JSON.parse(m) as Entry).filter((e) => e.route?.id === ids.udpRoute);
    await waitUntil('the udp-log datagram', () => sent().length === 1);
    const entry = sent()[0]!;
    expect(Object.keys(entry).sort()).toEqual(STREAM_FIELDS);
    expect(entry.session).toEqual({ received: 5, sent: 9, status: 200, server_port: udpPort });
    expect(entry.upstream).toEqual({ received: 9, sent: 5 });
    expect(entry.service.id).toBe(ids.udpService);
    expect(entry.client_ip).toBe('127.0.0.1');
    // file-log writes in order: once a later TCP session's line is in, a line for the UDP session would be too
    const before = fileEntries(ids.route!).length;
    expect(await tcpExchange(tcpPort, 'ping')).toBe('a:ping');
    await waitUntil('the later file-log line', () => fileEntries(ids.route!).length === before + 1);
    expect(fileEntries(ids.udpRoute!)).toEqual([]);
  });

  it('prometheus counts the sessions of its stream routes in kong_stream_sessions_total and kong_session_duration_ms', async () => {
    const dp = topology.dataPlanes[0]!;
    const scrape = async () => (await fetch(`${dp.statusUrl}/metrics`)).text();
    const sessions = (text: string, route: string, code: number, source: string) => {
      const line = new RegExp(`^kong_stream_sessions_total\\{service="echo",route="${route}",code="${code}",source="${source}",workspace="default"\\} (\\d+)$`, 'm').exec(text);
      return line === null ? 0 : Number(line[1]);
    };
    const durations = (text: string) => Number(/^kong_session_duration_ms_count\{service="echo",route="logged",workspace="default"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    const before = await scrape();
    expect(await tcpExchange(tcpPort, 'ping')).toBe('a:ping');
    expect(await tcpExchange(tcpPort, 'no', '127.0.0.3')).toBeNull();
    await waitUntil('the sessions counted', async () => {
      const now = await scrape();
      return sessions(now, 'logged', 200, 'service') === sessions(before, 'logged', 200, 'service') + 1 && sessions(now, 'refused', 403, 'kong') === sessions(before, 'refused', 403, 'kong') + 1;
    });
    expect(durations(await scrape())).toBe(durations(before) + 1);
    expect(await scrape()).toMatch(/^# TYPE kong_session_duration_ms histogram$/m);
  });
});
