import { httpPluginProtocols, pluginSchema } from '@gatehouse/core';

/**
 * The plugins whose Kong 3.9 schema takes every protocol (`typedefs.protocols`), stream ones included; all the
 * others take `typedefs.protocols_http` and refuse `tcp`, `tls`, `tls_passthrough` and `udp`.
 */
export const STREAM_PROTOCOL_PLUGINS: ReadonlySet<string> = new Set([
  'azure-functions',
  'datadog',
  'file-log',
  'grpc-gateway',
  'grpc-web',
  'http-log',
  'ip-restriction',
  'loggly',
  'post-function',
  'pre-function',
  'prometheus',
  'proxy-cache',
  'request-transformer',
  'session',
  'statsd',
  'syslog',
  'tcp-log',
  'udp-log',
  'zipkin',
]);

/** The `protocols` field of the named plugin's entity: every protocol, or HTTP's only. */
export function pluginProtocolsSchema(name: string): typeof pluginSchema.shape.protocols | typeof httpPluginProtocols {
  return STREAM_PROTOCOL_PLUGINS.has(name) ? pluginSchema.shape.protocols : httpPluginProtocols;
}
