import { consumers, routesEntityFor, schemaViolation, services, type RouterFlavor } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import { credentialKind } from './credential-kind';
import { plainKind, type EntityKind } from './entity-kind';
import { pluginKind } from './plugin-kind';
import { targetKind, upstreamKind } from '../upstreams/kinds';

/** Registers the core entities and the credential entities of the given plugins. */
/** where kinds are registered: the admin API's EntityService, or a plain list (offline document checks) */
export interface KindRegistry {
  register(kind: EntityKind): unknown;
}

export interface KindOptions {
  /** Kong's `router_flavor`: `expressions` lets routes carry `expression` and `priority` */
  routerFlavor?: RouterFlavor;
}

export function registerDefaultKinds(service: KindRegistry, plugins: PluginDefinition[], options: KindOptions = {}): void {
  service.register({ def: consumers, listFilters: ['custom_id'] });
  service.register({
    def: services,
    // the url shorthand is expanded before validation; one left over could not be parsed
    preValidate: (input) => {
      if (input.url !== undefined) throw schemaViolation({ url: 'should be a valid URL (scheme://host[:port][/path])' });
    },
  });
  service.register(plainKind(routesEntityFor(options.routerFlavor)));
  service.register(pluginKind(plugins));
  for (const plugin of plugins) for (const entity of plugin.entities ?? []) service.register(credentialKind(entity));
  service.register(upstreamKind);
  service.register(targetKind);
}
