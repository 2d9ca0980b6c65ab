import type { JsonObject } from '@gatehouse/core';
import type { Method } from '../../http/resources';
import type { OperationDoc } from '../route-doc';
import { bad, notFound } from './common';

/** Docs of Kong 3.9's node and operations paths (`operations/`, `/cache`, client_certificate, oauth2 token writes). */

const anyObject: JsonObject = { type: 'object' };
const message = { description: 'Done', schema: 'Message' };
const list: JsonObject = { type: 'object', properties: { data: { type: 'array', items: anyObject }, next: { type: 'null' } }, required: ['data', 'next'] };
const timeout = [{ name: 'timeout', description: 'seconds before the configured level comes back (default 60; 0: none); also a body field', schema: { type: 'integer', minimum: 0 } }];
const levelParam = { level: "one of Kong's levels: debug, info, notice, warn, error, crit, alert, emerg" };

function setLevel(summary: string): OperationDoc {
  return { summary, tag: 'debug', params: levelParam, query: timeout, responses: { 200: message, 400: { description: 'Unknown level or negative timeout', schema: 'Message' }, 405: { description: 'DB-less node', schema: 'Message' } } };
}

const wasmOff: OperationDoc = {
  summary: 'WebAssembly filter chains (answer 400: wasm is off)',
  tag: 'wasm',
  responses: { 200: { description: 'Never: wasm is off, as in Kong with `wasm = off`' }, 400: { description: 'this endpoint is only available when wasm is enabled', schema: 'Message' } },
};
const allMethods = (doc: OperationDoc) => ({ get: doc, post: doc, put: doc, patch: doc, delete: doc });

function clientCertificateDocs(child: 'services' | 'upstreams'): Record<string, Partial<Record<Method, OperationDoc>>> {
  const one = { tag: 'certificates', params: { parent: 'the certificate id', ref: `one of ${child}, by id or name` } };
  return {
    [`/${child}/:ref/client_certificate`]: {
      get: { summary: `Read the client certificate one of ${child} presents`, tag: child, responses: { 200: { description: 'Found', schema: anyObject }, 404: notFound } },
      put: { summary: `Create or replace the client certificate of one of ${child}`, tag: child, body: anyObject, responses: { 200: { description: 'Created or replaced', schema: anyObject }, 400: bad, 404: notFound } },
      patch: { summary: `Update the client certificate of one of ${child}`, tag: child, body: anyObject, responses: { 200: { description: 'Updated', schema: anyObject }, 400: bad, 404: notFound } },
      delete: { summary: `Refused (405) when one of ${child} presents a client certificate, as Kong`, tag: child, responses: { 204: { description: 'Never answered: the delete is refused' }, 404: notFound, 405: { description: 'Method not allowed', schema: 'Message' } } },
    },
    [`/certificates/:parent/${child}`]: {
      get: { ...one, summary: `List ${child} presenting a client certificate`, responses: { 200: { description: 'All of them', schema: list }, 404: notFound } },
      post: { ...one, summary: `Create one of ${child} presenting a client certificate`, body: anyObject, responses: { 201: { description: 'Created', schema: anyObject }, 400: bad, 404: notFound } },
    },
    [`/certificates/:parent/${child}/:ref`]: {
      get: { ...one, summary: `Read one of ${child} presenting a client certificate`, responses: { 200: { description: 'Found', schema: anyObject }, 404: notFound } },
      put: { ...one, summary: `Create or replace one of ${child} presenting a client certificate`, body: anyObject, responses: { 200: { description: 'Done', schema: anyObject }, 400: bad, 404: notFound } },
      patch: { ...one, summary: `Update one of ${child} presenting a client certificate`, body: anyObject, responses: { 200: { description: 'Updated', schema: anyObject }, 400: bad, 404: notFound } },
      delete: { ...one, summary: `Delete one of ${child} presenting a client certificate`, responses: { 204: { description: 'Deleted' }, 404: notFound } },
    },
  };
}

export const OPERATIONS_ROUTE_DOCS: Record<string, Partial<Record<Method, OperationDoc>>> = {
  '/cache': { delete: { summary: 'Purge what the data planes cache (every proxy-cache entry)', tag: 'cache', responses: { 204: { description: 'Purged on every data plane and in Redis' } } } },
  '/cache/:key': {
    get: { summary: 'Read a cached entry', tag: 'cache', params: { key: 'the cache key' }, responses: { 200: { description: 'The entry', schema: anyObject }, 404: notFound } },
    delete: { summary: 'Purge a cached entry', tag: 'cache', params: { key: 'the cache key' }, responses: { 204: { description: 'Purged (whether or not it was cached)' } } },
  },
  '/debug/node/log-level': { get: { summary: "This node's log level", tag: 'debug', responses: { 200: message } } },
  '/debug/node/log-level/:level': { put: setLevel("Change this node's log level") },
  '/debug/cluster/log-level/:level': { put: setLevel('Change the log level of every node (control planes and data planes)') },
  '/debug/cluster/control-planes-nodes/log-level/:level': { put: setLevel('Change the log level of every control plane') },
  '/endpoints': { get: { summary: 'Every path template of the admin API', tag: 'node', responses: { 200: { description: '`{data: [templates]}`', schema: anyObject } } } },
  '/timers': { get: { summary: "Timer and event-loop statistics (Kong's shape)", tag: 'node', responses: { 200: { description: 'Statistics', schema: anyObject } } } },
  '/status/dns': { get: { summary: "DNS statistics of the node's lookups per name and record type (Kong's new DNS client)", tag: 'node', responses: { 200: { description: '`worker` and `stats` keyed `name|TYPE`' } } } },
  '/schemas/filters/:name': { get: { summary: "A WebAssembly filter's schema (none: wasm is off)", tag: 'wasm', params: { name: 'the filter name' }, responses: { 200: { description: 'Never' }, 404: notFound } } },
  '/filter-chains': allMethods(wasmOff),
  '/filter-chains/:filter_chains': allMethods(wasmOff),
  '/filter-chains/:filter_chains/route': allMethods(wasmOff),
  '/filter-chains/:filter_chains/service': allMethods(wasmOff),
  '/routes/:routes/filter-chains': allMethods(wasmOff),
  '/routes/:routes/filter-chains/:filter_chains': allMethods(wasmOff),
  '/services/:services/filter-chains': allMethods(wasmOff),
  '/services/:services/filter-chains/:filter_chains': allMethods(wasmOff),
  '/routes/:routes/filters/enabled': allMethods(wasmOff),
  '/routes/:routes/filters/disabled': allMethods(wasmOff),
  '/routes/:routes/filters/all': allMethods(wasmOff),
  ...clientCertificateDocs('services'),
  ...clientCertificateDocs('upstreams'),
  '/oauth2_tokens': { post: { summary: 'Create an oauth2 token', description: 'The access and refresh tokens are generated when not given, and shown in clear in this reply only.', tag: 'oauth2_tokens', body: anyObject, responses: { 201: { description: 'Created', schema: anyObject }, 400: bad } } },
  '/oauth2_tokens/:token': { patch: { summary: 'Update an oauth2 token', tag: 'oauth2_tokens', params: { token: 'the token id or its access token' }, body: anyObject, responses: { 200: { description: 'Updated', schema: anyObject }, 400: bad, 404: notFound } } },
  '/oauth2_tokens/:token/credential': { get: { summary: 'The oauth2 credential a token was issued to', tag: 'oauth2_tokens', params: { token: 'the token id or its access token' }, responses: { 200: { description: 'Found', schema: anyObject }, 404: notFound } } },
  '/oauth2_tokens/:token/service': { get: { summary: 'The service a token was issued for', tag: 'oauth2_tokens', params: { token: 'the token id or its access token' }, responses: { 200: { description: 'Found', schema: anyObject }, 404: notFound } } },
  '/oauth2/:parent/oauth2_tokens': { get: { summary: 'The tokens of an oauth2 credential', tag: 'oauth2_tokens', params: { parent: 'the credential id or client_id' }, responses: { 200: { description: 'All of them', schema: list }, 404: notFound } } },
  '/services/:parent/oauth2_tokens': { get: { summary: 'The tokens issued for a service', tag: 'oauth2_tokens', params: { parent: 'the service id or name' }, responses: { 200: { description: 'All of them', schema: list }, 404: notFound } } },
};

export const OPERATIONS_TAG_DESCRIPTIONS: Record<string, string> = {
  cache: 'What the data planes cache',
  debug: "Log levels at run time (Kong's /debug paths)",
  wasm: 'WebAssembly filter chains: off, as in Kong with `wasm = off`',
};

/** Catalogues merged path by path and method by method (several modules document methods of one path). */
export function mergeCatalogues(...catalogues: Array<Record<string, Partial<Record<Method, OperationDoc>>>>): Record<string, Partial<Record<Method, OperationDoc>>> {
  const out: Record<string, Partial<Record<Method, OperationDoc>>> = {};
  for (const catalogue of catalogues) for (const [path, methods] of Object.entries(catalogue)) out[path] = { ...out[path], ...methods };
  return out;
}
