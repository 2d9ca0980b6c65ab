import type { FieldErrors } from '@gatehouse/core';
import type { z } from 'zod';
import { plugins as pluginDefinition, pluginSchema, schemaViolation } from '@gatehouse/core';
import { pluginProtocolsSchema, type PluginDefinition } from '@gatehouse/plugins';
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
      // a plugin that runs on HTTP only refuses stream protocols, as Kong's `typedefs.protocols_http` does
      schema = pluginSchema.extend({ config: plugin.configSchema.prefault({}), protocols: pluginProtocolsSchema(plugin.name) });
      schemas.set(plugin.name, schema);
    }
    return schema;
  };
  const pluginOf = (input: Record<string, unknown>) => (typeof input.name === 'string' ? byName.get(input.name) : undefined);

  return {
    // Kong's shorthand fields: deprecated config fields rewritten onto their replacements as the input is read
    def: { ...pluginDefinition, normalizeInput: (input) => withShorthands(pluginOf(input), input) },
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
      if (errors && Object.keys(errors).length > 0) throw schemaViolation(placeConfigErrors(errors));
    },
  };
}

function withShorthands(plugin: PluginDefinition | undefined, input: Record<string, unknown>): Record<string, unknown> {
  const base = pluginDefinition.normalizeInput ? pluginDefinition.normalizeInput(input) : input;
  const config = base.config;
  if (!plugin?.shorthandFields || !config || typeof config !== 'object' || Array.isArray(config)) return base;
  return { ...base, config: plugin.shorthandFields(config as Record<string, unknown>) };
}

/**
 * Puts a plugin's config check errors where Kong reports them: `@entity` (checks across the plugin's fields, e.g.
 * acl's allow/deny) at the top level, `@config` (a check of the config record as a whole) as `fields.config`,
 * `@record` (an entity check declared on the config record, as Kong's LLM record has) as `fields.config['@entity']`, and
 * field errors under `fields.config.<field>`.
 */
export function placeConfigErrors(errors: Record<string, string | string[]>): FieldErrors {
  const { '@entity': entity, '@config': record, '@record': recordCheck, ...perField } = errors;
  const fields: FieldErrors = {};
  if (entity !== undefined) fields['@entity'] = Array.isArray(entity) ? entity : [entity];
  if (record !== undefined) fields.config = Array.isArray(record) ? record.join('; ') : record;
  else if (recordCheck !== undefined) fields.config = { '@entity': Array.isArray(recordCheck) ? recordCheck : [recordCheck], ...perField };
  else if (Object.keys(perField).length > 0) fields.config = perField;
  return fields;
}
