import type { PluginRuntime } from '../contract';
import type { OpenTelemetryConfig } from './schema';

export const OPENTELEMETRY_VERSION = '3.9.0';

/** The resource of exported spans and logs: `service.name` `kong`, the node's id and version, then `resource_attributes`. */
export function resourceAttributes(config: OpenTelemetryConfig, runtime: PluginRuntime): Record<string, string> {
  const out: Record<string, string> = { 'service.name': 'kong', 'service.version': OPENTELEMETRY_VERSION };
  if (runtime.nodeId !== undefined) out['service.instance.id'] = runtime.nodeId;
  return { ...out, ...(config.resource_attributes ?? {}) };
}
