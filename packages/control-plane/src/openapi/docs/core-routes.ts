import type { JsonObject } from '@gatehouse/core';
import type { Method } from '../../http/resources';
import type { OperationDoc } from '../route-doc';
import { notFound, page, paging } from './common';

/** Docs of the control plane's custom admin routes (node, schemas, tags, legacy /apis, clustering, oauth2 tokens). */

const anyObject: JsonObject = { type: 'object', additionalProperties: true };
const kongSchema: JsonObject = {
  type: 'object',
  description: "Kong's schema document: `fields` (one entry per field), `entity_checks`, …",
  properties: { fields: { type: 'array', items: anyObject } },
  additionalProperties: true,
};
const validated: JsonObject = { type: 'object', properties: { message: { type: 'string', const: 'schema validation successful' } } };
const tagRow: JsonObject = {
  type: 'object',
  properties: { entity_name: { type: 'string' }, entity_id: { type: 'string', format: 'uuid' }, tag: { type: 'string' } },
  required: ['entity_name', 'entity_id', 'tag'],
};
const dataPlane: JsonObject = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    hostname: { type: 'string' },
    ip: { type: 'string' },
    version: { type: 'string' },
    sync_status: { type: 'string' },
    config_hash: { type: 'string' },
    config_version: { type: ['integer', 'null'] },
    last_seen: { type: 'integer' },
    updated_at: { type: 'integer' },
    ttl: { type: 'integer' },
    labels: { type: 'object' },
  },
};
const oauth2Token: JsonObject = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    credential: { type: 'object', properties: { id: { type: 'string' } } },
    access_token: { type: 'string', description: '`sha256:<hex>`: the digest kept in place of the token' },
    refresh_token: { type: ['string', 'null'], description: '`sha256:<hex>`: the digest kept in place of the refresh token' },
    token_type: { type: 'string' },
    expires_in: { type: 'integer' },
    scope: { type: ['string', 'null'] },
    authenticated_userid: { type: ['string', 'null'] },
    created_at: { type: 'integer' },
  },
};
const badInput = { description: 'Schema violation', schema: 'KongError' };
const apiPlugin: JsonObject = { allOf: [{ $ref: '#/components/schemas/Plugin' }, { type: 'object', properties: { api_id: { type: 'string', format: 'uuid' } } }] };

const pluginSchema = (summary: string): Partial<Record<Method, OperationDoc>> => ({
  get: {
    summary,
    params: { name: 'the plugin name' },
    responses: { 200: { description: "Kong's schema document", schema: kongSchema }, 404: notFound },
  },
});

export const CORE_ROUTE_DOCS: Record<string, Partial<Record<Method, OperationDoc>>> = {
  '/': {
    get: {
      summary: 'Node information',
      description: "Kong's node document (version `3.9.0` for Kong tools, configuration, available plugins), read by decK and Kong Manager.",
      tag: 'node',
      responses: { 200: { description: 'The node', schema: anyObject } },
    },
  },
  '/status': {
    get: {
      summary: 'Health of the node',
      description:
        'Database reachability, config version, connection counters, dangling `config.anonymous` references under `warnings`, the local data plane\'s `configuration_hash` in `gatehouse start`, and Gatehouse\'s own version.',
      tag: 'node',
      responses: { 200: { description: 'The status', schema: anyObject } },
    },
  },
  '/plugins/enabled': {
    get: {
      summary: 'Names of the plugins installed on this node',
      responses: { 200: { description: 'The names', schema: { type: 'object', properties: { enabled_plugins: { type: 'array', items: { type: 'string' } } } } } },
    },
  },
  '/plugins/schema/:name': pluginSchema("A plugin's schema (the location before Kong 3.0)"),
  '/schemas/plugins/validate': {
    post: {
      summary: 'Check a plugin without creating it',
      body: 'PluginInput',
      responses: { 200: { description: 'Valid', schema: validated }, 400: badInput },
    },
  },
  '/schemas/plugins/:name': pluginSchema("A plugin's config schema"),
  '/schemas/:entity/validate': {
    post: {
      summary: 'Check an entity without creating it',
      params: { entity: 'the entity name (`consumers`) or its admin path (`key-auths`)' },
      body: anyObject,
      responses: { 200: { description: 'Valid', schema: validated }, 400: badInput, 404: notFound },
    },
  },
  '/schemas/:entity': {
    get: {
      summary: "An entity's schema",
      description: 'What Kong Manager builds its forms from.',
      params: { entity: 'the entity name (`consumers`) or its admin path (`key-auths`)' },
      responses: { 200: { description: "Kong's schema document", schema: kongSchema }, 404: notFound },
    },
  },
  '/tags': {
    get: {
      summary: 'Every tag of every entity',
      description: 'Ordered by tag, entity name and id.',
      query: paging,
      responses: { 200: { description: 'One page', schema: page(tagRow) }, 400: { description: 'Invalid size or offset', schema: 'KongError' } },
    },
  },
  '/tags/:tag': {
    get: {
      summary: 'The entities carrying one tag',
      params: { tag: 'the tag' },
      query: paging,
      responses: { 200: { description: 'One page', schema: page(tagRow) }, 400: { description: 'Invalid size or offset', schema: 'KongError' }, 404: notFound },
    },
  },
  '/apis': {
    get: { summary: 'List legacy APIs', query: paging, responses: { 200: { description: 'One page', schema: page('Api') }, 400: badInput } },
    post: {
      summary: 'Create a legacy API',
      description: 'Kong 0.10–0.14: stored as a service and a route named after the API.',
      body: 'ApiInput',
      responses: { 201: { description: 'Created', schema: 'Api' }, 400: badInput, 409: { description: 'Unique violation', schema: 'KongError' } },
    },
    put: {
      summary: 'Create or replace a legacy API',
      description: 'The `name` (or `id`) in the body says which API; 201 when created, 200 when replaced.',
      body: 'ApiInput',
      responses: { 200: { description: 'Replaced', schema: 'Api' }, 201: { description: 'Created', schema: 'Api' }, 400: badInput },
    },
  },
  '/apis/:api': {
    get: { summary: 'Read a legacy API', params: { api: 'the API name or id' }, responses: { 200: { description: 'Found', schema: 'Api' }, 404: notFound } },
    patch: {
      summary: 'Update a legacy API',
      params: { api: 'the API name or id' },
      body: 'ApiInput',
      responses: { 200: { description: 'Updated', schema: 'Api' }, 400: badInput, 404: notFound },
    },
    delete: {
      summary: 'Delete a legacy API with its service and route',
      params: { api: 'the API name or id' },
      responses: { 204: { description: 'Deleted' }, 404: notFound },
    },
  },
  '/apis/:api/plugins': {
    get: {
      summary: "List a legacy API's plugins",
      params: { api: 'the API name or id' },
      query: paging,
      responses: { 200: { description: 'One page', schema: page(apiPlugin) }, 404: notFound },
    },
    post: {
      summary: 'Add a plugin to a legacy API',
      params: { api: 'the API name or id' },
      body: 'PluginInput',
      responses: { 201: { description: 'Created', schema: apiPlugin }, 400: badInput, 404: notFound },
    },
    put: {
      summary: 'Create or replace a plugin of a legacy API',
      params: { api: 'the API name or id' },
      body: 'PluginInput',
      responses: { 200: { description: 'Replaced', schema: apiPlugin }, 201: { description: 'Created', schema: apiPlugin }, 400: badInput, 404: notFound },
    },
  },
  '/apis/:api/plugins/:plugin': {
    get: {
      summary: 'Read a plugin of a legacy API',
      params: { api: 'the API name or id', plugin: 'the plugin id' },
      responses: { 200: { description: 'Found', schema: apiPlugin }, 404: notFound },
    },
    patch: {
      summary: 'Update a plugin of a legacy API',
      params: { api: 'the API name or id', plugin: 'the plugin id' },
      body: 'PluginPatch',
      responses: { 200: { description: 'Updated', schema: apiPlugin }, 400: badInput, 404: notFound },
    },
    delete: {
      summary: 'Delete a plugin of a legacy API',
      params: { api: 'the API name or id', plugin: 'the plugin id' },
      responses: { 204: { description: 'Deleted' }, 404: notFound },
    },
  },
  '/clustering/data-planes': {
    get: {
      summary: 'The data planes of this cluster',
      description: 'Every data plane that reported through the bus recently: id, hostname, version, config hash and version, last seen, sync status.',
      responses: { 200: { description: 'The data planes', schema: page(dataPlane) } },
    },
  },
  '/clustering/status': {
    get: {
      summary: 'The data planes by id (deprecated)',
      description: 'Kong 2.x shape; answered with a `Deprecation` header. Use `/clustering/data-planes`.',
      responses: { 200: { description: 'Data planes by id', schema: anyObject } },
    },
  },
  '/oauth2_tokens': {
    get: {
      summary: 'List oauth2 tokens',
      description:
        'Tokens live where the data planes keep them (Redis in a cluster, memory in `gatehouse start`), not in Postgres, as SHA-256 digests: `access_token` and `refresh_token` show those, never the tokens.',
      query: paging,
      responses: { 200: { description: 'One page', schema: page(oauth2Token) }, 400: { description: 'Invalid offset', schema: 'KongError' } },
    },
  },
  '/oauth2_tokens/:token': {
    get: {
      summary: 'Read an oauth2 token',
      params: { token: 'the token id, its access token, or the `sha256:<hex>` digest shown' },
      responses: { 200: { description: 'Found', schema: oauth2Token }, 404: notFound },
    },
    delete: {
      summary: 'Revoke an oauth2 token',
      description: 'It stops working on every data plane at once, its refresh token with it.',
      params: { token: 'the token id, its access token, or the `sha256:<hex>` digest shown' },
      responses: { 204: { description: 'Revoked, or was not there' } },
    },
  },
  '/key-sets': {
    put: {
      summary: 'Create or replace a key set by the name in the body',
      body: 'KeySetInput',
      responses: { 200: { description: 'Created or replaced', schema: 'KeySet' }, 400: badInput },
    },
  },
};

export const CORE_TAG_DESCRIPTIONS: Record<string, string> = {
  node: 'The node: information, status, this document.',
  schemas: "Kong's schema documents of entities and plugins, and dry-run validation.",
  tags: 'Tags across every entity that carries them.',
  apis: "Kong 0.10–0.14's `/apis`, kept as a layer over services and routes.",
  clustering: 'The data planes fed by this control plane.',
  oauth2_tokens: 'Tokens issued by the oauth2 plugin.',
  docs: 'This document, rendered.',
};
