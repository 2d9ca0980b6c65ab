import { describe, expect, it } from '@jest/globals';
import type { SerializedExchange } from '../shared/log-serializer';
import { datadogLines } from '../datadog';
import { datadogConfigSchema } from '../datadog/schema';
import { packDatagrams } from '.';
import { statsdLines, statusAllowed } from './metrics';
import { statsdConfigSchema } from './schema';

function entry(overrides: Partial<SerializedExchange> = {}): SerializedExchange {
  return {
    request: { id: 'r', method: 'GET', uri: '/', url: 'http://x/', querystring: {}, headers: {}, size: 120 },
    response: { status: 200, headers: {}, size: 340 },
    upstream_uri: '/',
    upstream_status: '200',
    tries: [],
    latencies: { kong: 2, proxy: 10, request: 13, receive: 0 },
    route: { id: 'route-1', name: 'r1', ws_id: 'ws-1' },
    service: { id: 'svc-1', name: 'my.api', host: 'api.internal' },
    consumer: { id: 'c-1', username: 'alice', custom_id: 'cust-7' },
    client_ip: '127.0.0.1',
    started_at: 0,
    source: 'service',
    workspace_name: 'default',
    ...overrides,
  };
}

describe('statsd lines', () => {
  it("sends Kong's default metrics under service.<name> with dots as underscores", () => {
    const lines = statsdLines(statsdConfigSchema.parse({}), entry(), 'gw.local');
    expect(lines).toEqual([
      'kong.service.my_api.request.count:1|c',
      'kong.service.my_api.latency:13|ms',
      'kong.service.my_api.request.size:120|c',
      'kong.service.my_api.status.200:1|c',
      'kong.service.my_api.response.size:340|c',
      'kong.service.my_api.user.uniques:cust-7|s',
      'kong.service.my_api.user.cust-7.request.count:1|c',
      'kong.service.my_api.upstream_latency:10|ms',
      'kong.service.my_api.kong_latency:2|ms',
      'kong.service.my_api.user.cust-7.status.200:1|c',
      'kong.service.my_api.workspace.ws-1.status.200:1|c',
      'kong.route.route-1.user.cust-7.status.200:1|c',
    ]);
  });

  it('honours identifiers, sample rates, hostname_in_prefix and skips an upstream latency of -1', () => {
    const config = statsdConfigSchema.parse({
      hostname_in_prefix: true,
      service_identifier_default: 'service_host',
      metrics: [
        { name: 'request_count', stat_type: 'counter', sample_rate: 0.5 },
        { name: 'upstream_latency', stat_type: 'timer' },
        { name: 'request_per_user', stat_type: 'counter', sample_rate: 1, consumer_identifier: 'username' },
      ],
    });
    expect(statsdLines(config, entry({ latencies: { kong: 1, proxy: -1, request: 1, receive: 0 } }), 'gw.local')).toEqual([
      'kong.node.gw_local.service.api_internal.request.count:1|c|@0.5',
      'kong.node.gw_local.service.api_internal.user.alice.request.count:1|c',
    ]);
    expect(statsdLines(config, entry({ service: undefined }), 'h')[0]).toBe('kong.node.h.global.unmatched.request.count:1|c|@0.5');
  });

  it('writes tags in each tag style and leaves out the per-user and per-status metrics', () => {
    const metrics = [{ name: 'request_count', stat_type: 'counter', sample_rate: 1 }, { name: 'status_count', stat_type: 'counter', sample_rate: 1 }];
    const line = (tag_style: string) => statsdLines(statsdConfigSchema.parse({ tag_style, metrics }), entry(), 'n');
    const tags = 'service:my.api,route:r1,workspace:ws-1,consumer:cust-7,node:n,status:200';
    expect(line('dogstatsd')).toEqual([`kong.request.count:1|c|#${tags}`]);
    expect(line('influxdb')).toEqual([`kong.request.count,${tags.replace(/:/g, '=')}:1|c`]);
    expect(line('librato')).toEqual([`kong.request.count#${tags.replace(/:/g, '=')}:1|c`]);
    expect(line('signalfx')).toEqual([`kong.request.count[${tags.replace(/:/g, '=')}]:1|c`]);
  });

  it('filters by allow_status_codes and packs datagrams up to udp_packet_size', () => {
    const config = statsdConfigSchema.parse({ allow_status_codes: ['200-204', '400-499'] });
    expect([200, 204, 205, 404, 500].map((s) => statusAllowed(config, s))).toEqual([true, true, false, true, false]);
    expect(packDatagrams(['aaaa', 'bbbb', 'cccc'], 9)).toEqual(['aaaa\nbbbb', 'cccc']);
    expect(packDatagrams(['aaaa', 'bbbb'], 0)).toEqual(['aaaa', 'bbbb']);
  });

  it('validates like Kong: counters need a sample rate, status ranges are from-to', () => {
    const bad = statsdConfigSchema.safeParse({ metrics: [{ name: 'request_count', stat_type: 'counter' }], allow_status_codes: ['200'] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.path.join('.')).sort()).toEqual(['allow_status_codes.0', 'metrics.0.sample_rate']);
  });
});

describe('datadog lines', () => {
  it('tags each metric with the service name, status, consumer and its own tags', () => {
    const config = datadogConfigSchema.parse({ metrics: [{ name: 'request_count', stat_type: 'counter', sample_rate: 1, tags: ['app:kong', 'team:a'], consumer_identifier: 'consumer_id' }, { name: 'latency', stat_type: 'distribution', sample_rate: 0.1 }] });
    expect(datadogLines(config, entry({ consumer: { id: 'c-1-2' } }))).toEqual(['kong.request.count:1|c|#name:my_api,status:200,consumer:c_1_2,app:kong,team:a', 'kong.latency:13|d|@0.1|#name:my_api,status:200']);
  });

  it("has Kong's default metrics", () => {
    expect(datadogLines(datadogConfigSchema.parse({}), entry()).map((l) => l.split('|')[0])).toEqual([
      'kong.request.count:1',
      'kong.latency:13',
      'kong.request.size:120',
      'kong.response.size:340',
      'kong.upstream_latency:10',
      'kong.kong_latency:2',
    ]);
  });
});
