import { randomUUID } from 'node:crypto';
import {
  buildSnapshot,
  consumerSchema,
  emptyConfig,
  expandServiceUrl,
  pluginSchema,
  routeSchema,
  expressionsRouteSchema,
  serviceSchema,
  targets as targetDefinition,
  targetSchema,
  upstreamSchema,
  type Consumer,
  type Plugin,
  type Route,
  type Service,
  type Snapshot,
  type SnapshotConfig,
  type Target,
  type Upstream,
} from '@gatehouse/core';

/**
 * Entities for snapshots built directly in tests (no control plane): each builder fills Kong's defaults through the
 * entity's own schema, plus an id and timestamps.
 */

let clock = 1_700_000_000;
const stamp = () => ({ created_at: clock, updated_at: clock++ });

export function makeService(fields: Record<string, unknown>): Service {
  return { ...serviceSchema.parse(expandServiceUrl({ id: randomUUID(), ...stamp(), ...fields })) } as Service;
}

export function makeRoute(fields: Record<string, unknown>): Route {
  return routeSchema.parse({ id: randomUUID(), ...stamp(), ...fields }) as Route;
}

/** A route as `router_flavor = expressions` stores it (with `expression` and `priority`). */
export function makeExpressionRoute(fields: Record<string, unknown>): Route {
  return expressionsRouteSchema.parse({ id: randomUUID(), ...stamp(), ...fields }) as Route;
}

export function makeConsumer(fields: Record<string, unknown>): Consumer {
  return consumerSchema.parse({ id: randomUUID(), ...stamp(), ...fields }) as Consumer;
}

/** A plugin row; `config` is kept as given (the data plane's compile fills the plugin's own defaults). */
export function makePlugin(fields: Record<string, unknown>): Plugin {
  return pluginSchema.parse({ id: randomUUID(), ...stamp(), ...fields }) as Plugin;
}

export function makeCredential(consumer: Consumer, fields: Record<string, unknown>): { id: string; consumer: { id: string } } & Record<string, unknown> {
  return { id: randomUUID(), created_at: clock++, consumer: { id: consumer.id }, tags: null, ...fields };
}

export function makeUpstream(fields: Record<string, unknown>): Upstream {
  return upstreamSchema.parse({ id: randomUUID(), ...stamp(), ...fields }) as Upstream;
}

/** A target of `upstream`; `target` is normalised to `host:port` as the control plane stores it. */
export function makeTarget(upstream: Upstream, fields: Record<string, unknown>): Target {
  const input = targetDefinition.normalizeInput!({ id: randomUUID(), ...stamp(), upstream: { id: upstream.id }, ...fields });
  return targetSchema.parse(input) as Target;
}

/** A snapshot from the given sections (the others empty), with its hashes. */
export function makeSnapshot(config: Partial<SnapshotConfig>, version = 1): Snapshot {
  return buildSnapshot(version, { ...emptyConfig(), ...config });
}
