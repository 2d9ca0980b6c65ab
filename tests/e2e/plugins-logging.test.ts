// The logging plugins that send each entry over a socket, through the real processes in both topologies, against
// receivers the test starts: tcp-log (plain and TLS), udp-log, syslog (a unix datagram socket in embedded mode, UDP in
// the cluster), loggly (UDP), statsd (UDP, and TCP with DogStatsD tags) and datadog (UDP). Entries are Kong's log
// serializer shape; syslog and loggly lines are RFC 5424; statsd and datadog send Kong's metric names.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEchoUpstream, type EchoUpstream } from '@gatehouse/testkit';
import { CertificateFactory } from '../support/certificates';
import { cleanUp, waitUntil } from './support/helpers';
import { startLineReceiver, startUdpReceiver, startUnixDatagramReceiver, type LineReceiver, type MessageReceiver } from './support/log-receivers';
import { adminClient, createdThrough, jsonAdmin, proxied, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const RFC5424 = /^<(\d+)>1 (\S+) (\S+) kong (\S+) - - (.*)$/s;

/** the entries among `raw` (JSON, or the JSON at the end of a syslog line) whose request id is `id` */
function entriesFor(raw: string[], id: string | null): any[] {
  return raw
    .map((text) => {
      const json = text.startsWith('<') ? text.slice(text.indexOf(' {') + 1) : text;
      try {
        return JSON.parse(json);
      } catch {
        return null;
      }
    })
    .filter((e) => e?.request?.id === id);
}

describe.each(TOPOLOGIES)('logging plugins over sockets (%s)', (name) => {
  let topology: Topology;
  let upstream: EchoUpstream;
  let tcp: LineReceiver;
  let tls: LineReceiver;
  let udp: MessageReceiver;
  let syslog: MessageReceiver;
  let loggly: MessageReceiver;
  let statsd: MessageReceiver;
  let statsdTcp: LineReceiver;
  let datadog: MessageReceiver;
  let dir: string;
  let admin: ReturnType<typeof adminClient>;
  const certificates = new CertificateFactory();

  const send = async (path: string, headers: Record<string, string> = {}) => {
    const res = await proxied(`${topology.proxyUrl}${path}`, { headers });
    return { status: res.status, id: res.headers.get('x-kong-request-id') };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `gh-e2e-logging-${name}-`));
    upstream = await startEchoUpstream();
    tcp = await startLineReceiver();
    tls = await startLineReceiver(certificates.selfSigned(['logs.example.test']));
    udp = await startUdpReceiver();
    loggly = await startUdpReceiver();
    statsd = await startUdpReceiver();
    statsdTcp = await startLineReceiver();
    datadog = await startUdpReceiver();
    syslog = name === 'embedded' ? startUnixDatagramReceiver(join(dir, 'syslog.sock')) : await startUdpReceiver();
    const syslogAddress = name === 'embedded' ? join(dir, 'syslog.sock') : `udp://127.0.0.1:${syslog.port}`;
    topology = await startTopology(name, { dataPlaneEnv: { GATEHOUSE_SYSLOG_ADDRESS: syslogAddress } });
    admin = adminClient(topology.adminUrl);
    const service = await createdThrough(topology.adminUrl, '/services', { name: 'logged', url: upstream.url });
    const routeWith = async (path: string, plugin: Record<string, unknown>) => {
      const route = await createdThrough(topology.adminUrl, `/services/${service.id}/routes`, { name: path, paths: [`/${path}`] });
      await createdThrough(topology.adminUrl, `/routes/${route.id}/plugins`, plugin);
    };
    await routeWith('tcp', { name: 'tcp-log', config: { host: '127.0.0.1', port: tcp.port } });
    await routeWith('tls', { name: 'tcp-log', config: { host: '127.0.0.1', port: tls.port, tls: true, tls_sni: 'logs.example.test', keepalive: 1000 } });
    await routeWith('udp', { name: 'udp-log', config: { host: '127.0.0.1', port: udp.port } });
    await routeWith('syslog', { name: 'syslog', config: { facility: 'local0', successful_severity: 'notice', client_errors_severity: 'debug', server_errors_severity: 'crit' } });
    const metricsService = async (serviceName: string, path: string, plugin: Record<string, unknown>) => {
      const svc = await createdThrough(topology.adminUrl, '/services', { name: serviceName, url: upstream.url });
      const route = await createdThrough(topology.adminUrl, `/services/${svc.id}/routes`, { name: path, paths: [`/${path}`] });
      await createdThrough(topology.adminUrl, `/routes/${route.id}/plugins`, plugin);
    };
    await metricsService('stats.svc', 'statsd', { name: 'statsd', config: { host: '127.0.0.1', port: statsd.port } });
    await metricsService('tagged', 'statsd-tagged', {
      name: 'statsd',
      config: { host: '127.0.0.1', port: statsdTcp.port, use_tcp: true, tag_style: 'dogstatsd', metrics: [{ name: 'request_count', stat_type: 'counter', sample_rate: 1 }] },
    });
    await metricsService('dd', 'datadog', { name: 'datadog', config: { host: '127.0.0.1', port: datadog.port } });
    await routeWith('loggly', { name: 'loggly', config: { host: '127.0.0.1', port: loggly.port, key: 'customer-token', tags: ['kong', 'e2e'] } });
    await topology.converge();
  });

  afterAll(async () => {
    certificates.cleanup();
    await cleanUp(
      () => topology?.stop(),
      () => tcp?.close(),
      () => tls?.close(),
      () => udp?.close(),
      () => syslog?.close(),
      () => loggly?.close(),
      () => statsd?.close(),
      () => statsdTcp?.close(),
      () => datadog?.close(),
      () => upstream?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('lists the plugins, serves their schemas and refuses bad configs with Kong\'s messages', async () => {
    const root = await admin.get('/');
    for (const plugin of ['tcp-log', 'udp-log', 'syslog', 'loggly', 'statsd', 'datadog']) {
      expect(root.body.plugins.available_on_server[plugin]).toMatchObject({ version: '3.9.0' });
      const schema = await admin.get(`/schemas/plugins/${plugin}`);
      expect(schema.status).toBe(200);
      // the socket loggers take Kong's custom_fields_by_lua; the metrics plugins batch through the queue
      expect(JSON.stringify(schema.body.fields)).toContain(['statsd', 'datadog'].includes(plugin) ? '"queue"' : 'custom_fields_by_lua');
    }
    const bad = async (plugin: string, config: Record<string, unknown>) => (await jsonAdmin(topology.adminUrl, 'POST', '/plugins', { name: plugin, config })).body;
    expect((await bad('tcp-log', { host: 'bad host!', port: 99999 })).fields.config).toEqual({ host: 'invalid value: bad host!', port: 'value should be between 0 and 65535' });
    expect((await bad('udp-log', { port: 9 })).fields.config).toEqual({ host: 'required field missing' });
    expect((await bad('syslog', { facility: 'local9' })).fields.config.facility).toMatch(/^expected one of: auth, authpriv, cron/);
    expect((await bad('loggly', { log_level: 'loud' })).fields.config).toEqual({ key: 'required field missing', log_level: 'expected one of: debug, info, notice, warning, err, crit, alert, emerg' });
    expect((await bad('statsd', { allow_status_codes: ['200'], udp_packet_size: 70000 })).fields.config).toEqual({ allow_status_codes: ['invalid value: 200'], udp_packet_size: 'value should be between 0 and 65507' });
    expect((await bad('datadog', { metrics: [{ name: 'request_count', stat_type: 'counter' }] })).fields.config.metrics).toEqual(['sample_rate: required field missing']);
    const defaults = await jsonAdmin(topology.adminUrl, 'POST', '/schemas/plugins/validate', { name: 'loggly', config: { key: 'k' } });
    expect(defaults.status).toBe(200);
  });

  it('tcp-log writes one JSON line per request, in Kong\'s log serializer shape', async () => {
    const { id } = await send('/tcp/some/path?a=1');
    await waitUntil('the tcp-log line', () => entriesFor(tcp.lines, id).length === 1);
    expect(entriesFor(tcp.lines, id)[0]).toMatchObject({ response: { status: 200 }, route: { name: 'tcp' }, service: { name: 'logged' }, upstream_uri: '/some/path?a=1', client_ip: '127.0.0.1' });
  });

  it('tcp-log over TLS sends the configured server name and keeps one line per request', async () => {
    const first = await send('/tls/1');
    const second = await send('/tls/2');
    await waitUntil('both lines over TLS', () => entriesFor(tls.lines, first.id).length === 1 && entriesFor(tls.lines, second.id).length === 1);
    expect(tls.serverNames[0]).toBe('logs.example.test');
  });

  it('udp-log sends one JSON datagram per request', async () => {
    const { id } = await send('/udp/x', { 'x-echo-status': '503' });
    await waitUntil('the udp-log datagram', () => entriesFor(udp.messages, id).length === 1);
    expect(entriesFor(udp.messages, id)[0]).toMatchObject({ response: { status: 503 }, route: { name: 'udp' } });
  });

  it('syslog sends RFC 5424 lines at the severity the status calls for, and nothing below log_level', async () => {
    const quiet = await send('/syslog/missing', { 'x-echo-status': '404' });
    const ok = await send('/syslog/ok');
    const failed = await send('/syslog/failed', { 'x-echo-status': '500' });
    await waitUntil('the two syslog lines', () => entriesFor(syslog.messages, ok.id).length === 1 && entriesFor(syslog.messages, failed.id).length === 1);
    const lineOf = (id: string | null) => syslog.messages.find((m) => m.includes(`"id":"${id}"`))!;
    // local0 (16) × 8 + notice (5), and + crit (2)
    expect(RFC5424.exec(lineOf(ok.id))?.[1]).toBe('133');
    expect(RFC5424.exec(lineOf(failed.id))?.[1]).toBe('130');
    expect(RFC5424.exec(lineOf(ok.id))?.[2]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // a 404 is logged at debug, below the default log_level info: never sent
    expect(entriesFor(syslog.messages, quiet.id)).toEqual([]);
  });

  it('loggly sends its syslog line with the token and tags as structured data', async () => {
    const { id } = await send('/loggly/x');
    await waitUntil('the loggly line', () => entriesFor(loggly.messages, id).length === 1);
    const line = loggly.messages.find((m) => m.includes(`"id":"${id}"`))!;
    expect(line).toMatch(/^<14>1 \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \S+ kong - - \[customer-token@41058 tag="kong" tag="e2e"\] \{/);
  });

  it('statsd sends Kong\'s metric names under the service scope, over UDP', async () => {
    const { status } = await send('/statsd/x');
    expect(status).toBe(200);
    const names = () => new Set(statsd.messages.map((m) => m.slice(0, m.indexOf(':'))));
    const expected = ['request.count', 'latency', 'request.size', 'status.200', 'response.size', 'upstream_latency', 'kong_latency'].map((n) => `kong.service.stats_svc.${n}`);
    await waitUntil('the statsd metrics', () => expected.every((n) => names().has(n)));
    expect(statsd.messages).toContain('kong.service.stats_svc.request.count:1|c');
    expect(statsd.messages).toContain('kong.service.stats_svc.status.200:1|c');
    expect(statsd.messages.find((m) => m.startsWith('kong.service.stats_svc.latency:'))).toMatch(/^kong\.service\.stats_svc\.latency:\d+\|ms$/);
    expect(statsd.messages.some((m) => /^kong\.service\.stats_svc\.workspace\.[^.]+\.status\.200:1\|c$/.test(m))).toBe(true);
  });

  it('statsd with tag_style dogstatsd over TCP tags the metric with service, route, workspace, node and status', async () => {
    await send('/statsd-tagged/x', { 'x-echo-status': '201' });
    await waitUntil('the tagged line', () => statsdTcp.lines.length >= 1);
    expect(statsdTcp.lines[0]).toMatch(/^kong\.request\.count:1\|c\|#service:tagged,route:statsd-tagged,workspace:[^,]+,node:[^,]+,status:201$/);
  });

  it('datadog sends DogStatsD lines tagged with the service name, status and its metric tags', async () => {
    await send('/datadog/x');
    await waitUntil('the datadog metrics', () => datadog.messages.length >= 6);
    expect(datadog.messages).toContain('kong.request.count:1|c|#name:dd,status:200,app:kong');
    expect(datadog.messages.find((m) => m.startsWith('kong.latency:'))).toMatch(/^kong\.latency:\d+\|ms\|#name:dd,status:200,app:kong$/);
    expect(datadog.messages.map((m) => m.slice(0, m.indexOf(':'))).sort()).toEqual(['kong.kong_latency', 'kong.latency', 'kong.request.count', 'kong.request.size', 'kong.response.size', 'kong.upstream_latency']);
  });
});
