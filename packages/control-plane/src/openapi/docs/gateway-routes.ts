import type { JsonObject } from '@gatehouse/core';
import type { Method } from '../../http/resources';
import type { OperationDoc } from '../route-doc';
import { bad, notFound, page, paging } from './common';

/**
 * Docs of the custom admin routes of the traffic and operations modules: declarative configuration, upstream health
 * and targets, the proxy cache, metrics and vault schemas. Entity CRUD of these families is generated.
 */

const anyObject: JsonObject = { type: 'object', additionalProperties: true };
const document: JsonObject = {
  type: 'object',
  description: "Kong's declarative format 3.0: `_format_version` and one list per entity family (`services`, `consumers`, `keyauth_credentials`, …)",
  properties: { _format_version: { type: 'string', const: '3.0' } },
  required: ['_format_version'],
  additionalProperties: true,
};
const diffEntity: JsonObject = { type: 'object', properties: { type: { type: 'string' }, id: { type: 'string' }, name: { type: 'string' } } };
const diff: JsonObject = {
  type: 'object',
  properties: {
    created: { type: 'array', items: diffEntity },
    changed: { type: 'array', items: { allOf: [diffEntity, { type: 'object', properties: { fields: { type: 'array', items: anyObject } } }] } },
    deleted: { type: 'array', items: diffEntity },
  },
};
const health: JsonObject = {
  type: 'object',
  description: "Kong's shape: `data` lists each target with its worst health reported by a live data plane; `data_planes` each one's own view",
  additionalProperties: true,
};
const targetParams = { parent: 'the upstream, by id or name', ref: 'the target, by id or `host:port`' };
const manual = (healthy: boolean, address: boolean): Partial<Record<Method, OperationDoc>> => {
  const op: OperationDoc = {
    summary: `Mark ${address ? 'one address of a target' : 'a target'} ${healthy ? 'healthy' : 'unhealthy'}`,
    description: 'Reaches every data plane over the health channel; not persisted (as in Kong).',
    tag: 'upstreams',
    params: address ? { ...targetParams, address: 'the address, `ip:port`' } : targetParams,
    responses: { 204: { description: 'Applied' }, 404: notFound },
  };
  return { put: op, post: { ...op, summary: `${op.summary} (POST form)` } };
};

export const GATEWAY_ROUTE_DOCS: Record<string, Partial<Record<Method, OperationDoc>>> = {
  '/config': {
    get: {
      summary: 'The whole configuration as a declarative document',
      description: 'Byte-identical between two reads of the same state. `?format=yaml` for YAML; `?select_tags=a,b` for the entities carrying those tags.',
      tag: 'declarative',
      query: [
        { name: 'format', description: '`yaml` for YAML (JSON otherwise)', schema: { type: 'string', enum: ['json', 'yaml'] } },
        { name: 'select_tags', description: 'only entities carrying all of these comma-separated tags' },
      ],
      responses: { 200: { description: 'The document', schema: document } },
    },
    post: {
      summary: 'Replace the configuration with a declarative document',
      description:
        'One transaction and one publication; missing ids are derived from the endpoint key. JSON, YAML, or the document as a string in `config`.',
      tag: 'declarative',
      query: [
        { name: 'flatten_errors', description: 'a flag (`true`/`1`/`yes`/`on`, `false`/`0`/`no`/`off`): errors also as `flattened_errors`, per entity' },
        { name: 'check_hash', description: 'a flag: 304 when nothing would change' },
        { name: 'dry_run', description: 'a flag: answer what would be created, changed and deleted, without writing' },
        { name: 'select_tags', description: 'replace only the entities carrying these tags; the document\'s entities get them' },
      ],
      body: document,
      responses: {
        201: { description: 'The entities now configured', schema: anyObject },
        200: { description: 'The diff (dry run)', schema: diff },
        304: { description: 'Nothing would change (check_hash)' },
        400: bad,
        413: { description: 'The body is larger than GATEHOUSE_ADMIN_MAX_CONFIG_BODY' },
      },
    },
  },
  '/upstreams/:parent/targets/all': {
    get: {
      summary: "All of an upstream's targets",
      description: 'The same list as `/upstreams/{upstream}/targets` (Kong keeps both paths).',
      tag: 'upstreams',
      params: { parent: 'the upstream, by id or name' },
      query: paging,
      responses: { 200: { description: 'A page of targets', schema: page('Target') }, 404: notFound },
    },
  },
  '/upstreams/:parent/health': {
    get: {
      summary: "Health of an upstream's targets",
      description: '`?balancer_health=1` answers the balancer\'s own health instead of the targets\'.',
      tag: 'upstreams',
      params: { parent: 'the upstream, by id or name' },
      query: [{ name: 'balancer_health', description: 'a flag (`true`/`1`/`yes`/`on`, `false`/`0`/`no`/`off`): the balancer health' }],
      responses: { 200: { description: 'Health as data planes report it', schema: health }, 404: notFound },
    },
  },
  '/upstreams/:parent/targets/:ref/healthy': manual(true, false),
  '/upstreams/:parent/targets/:ref/unhealthy': manual(false, false),
  '/upstreams/:parent/targets/:ref/:address/healthy': manual(true, true),
  '/upstreams/:parent/targets/:ref/:address/unhealthy': manual(false, true),
  '/proxy-cache': {
    delete: {
      summary: 'Purge every proxy-cache entry',
      tag: 'proxy-cache',
      responses: { 204: { description: 'Purged on every data plane and in Redis' } },
    },
  },
  '/proxy-cache/:key': {
    get: {
      summary: 'Read a proxy-cache entry',
      tag: 'proxy-cache',
      params: { key: 'the cache key (`X-Cache-Key`)' },
      responses: { 200: { description: 'The entry', schema: anyObject }, 404: notFound },
    },
    delete: {
      summary: 'Purge a proxy-cache entry',
      tag: 'proxy-cache',
      params: { key: 'the cache key (`X-Cache-Key`)' },
      responses: { 204: { description: 'Purged' }, 404: notFound },
    },
  },
  '/proxy-cache/:plugin/caches/:key': {
    get: {
      summary: "Read an entry of one proxy-cache plugin's cache",
      tag: 'proxy-cache',
      params: { plugin: 'the proxy-cache plugin id', key: 'the cache key' },
      responses: { 200: { description: 'The entry', schema: anyObject }, 404: notFound },
    },
    delete: {
      summary: "Purge an entry of one proxy-cache plugin's cache",
      tag: 'proxy-cache',
      params: { plugin: 'the proxy-cache plugin id', key: 'the cache key' },
      responses: { 204: { description: 'Purged' }, 404: notFound },
    },
  },
  '/metrics': {
    get: {
      summary: 'Prometheus metrics of this node',
      description: "Prometheus text format, Kong's metric names where Kong has one, ours prefixed `gatehouse_`.",
      tag: 'node',
      responses: { 200: { description: 'Metrics in Prometheus text format', schema: { type: 'string' } } },
    },
  },
  '/schemas/vaults/:name': {
    get: {
      summary: "A vault's configuration schema",
      tag: 'schemas',
      params: { name: 'the vault name (`env`)' },
      responses: { 200: { description: "Kong's schema document", schema: anyObject }, 404: notFound },
    },
  },
};

export const GATEWAY_TAG_DESCRIPTIONS: Record<string, string> = {
  declarative: 'The whole configuration as one document (Kong format 3.0)',
  'proxy-cache': "Entries of the proxy-cache plugin's caches",
};
