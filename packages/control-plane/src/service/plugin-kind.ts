import type { z } from 'zod';
import { plugins as pluginDefinition, pluginSchema, schemaViolation } from '@gatehouse/core';
import type { PluginDefinition } from '@gatehouse/plugins';
import type { EntityKind } from './entity-kind';

export function pluginNotEnabled(name: string): string {
  return `plugin '${name}' not enabled; add it to the 'plugins' configuration property`;
}

/**
 * Plugins: the entity's `config` is validated by the named plugin's own schema (defaults filled), the plugin's
 * cross-field checks run under `config`, and plugins marked `noConsumer` (authentication) refuse a consumer scope.
 * `config.anonymous` is deliberately not resolved: the interface document lets it name a consumer that does not exist.
 */
export function pluginKind(available: PluginDefinition[]): EntityKind {
  const byName = new Map(available.map((p) => [p.name, p]));
  const schemas = new Map<string, z.ZodObject>();
  const schemaOf = (plugin: PluginDefinition): z.ZodObject => {
    let schema = schemas.get(plugin.name);
    if (!schema) {
      schema = pluginSchema.extend({ config: plugin.configSchema.prefault({}) });
      schemas.set(plugin.name, schema);
    }
    return schema;
  };
  const pluginOf = (input: Record<string, unknown>) => (typeof input.name === 'string' ? byName.get(input.name) : undefined);

  return {
    def: pluginDefinition,
    schemaFor(input) {
      const plugin = pluginOf(input);
      return plugin ? schemaOf(plugin) : pluginSchema;
    },
    preValidate(input) {
      if (typeof input.name === 'string' && input.name !== '' && !byName.has(input.name)) {
        throw schemaViolation({ name: pluginNotEnabled(input.name) });
      }
    },
    validate(entity) {
      const plugin = pluginOf(entity);
      if (!plugin) return;
      if (plugin.noConsumer && entity.consumer != null) throw schemaViolation({ consumer: 'value must be null' });
      const errors = plugin.checkConfig?.(entity.config);
      if (errors && Object.keys(errors).length > 0) throw schemaViolation({ config: errors });
    },
  };
}
