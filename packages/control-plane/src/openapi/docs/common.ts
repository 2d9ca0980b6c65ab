import type { JsonObject } from '@gatehouse/core';
import type { OperationDoc } from '../route-doc';

/** Pieces shared by the docs of custom routes. */

/** `{data, offset, next}` of a component name or an inline schema */
export const page = (items: string | JsonObject): JsonObject => ({
  type: 'object',
  properties: {
    data: { type: 'array', items: typeof items === 'string' ? { $ref: `#/components/schemas/${items}` } : items },
    offset: { type: 'string' },
    next: { type: ['string', 'null'] },
  },
  required: ['data', 'next'],
});

export const paging: NonNullable<OperationDoc['query']> = [
  { name: 'size', description: 'page size (1–1000, default 100)', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
  { name: 'offset', description: 'the `offset` of the previous page' },
];

export const bad = { description: 'Schema violation', schema: 'KongError' };
export const conflict = { description: 'Unique violation', schema: 'KongError' };
export const notFound = { description: 'Not found', schema: 'Message' };

/** GET (one page) and POST (create) of a collection whose items are the `schema` component */
export function listAndCreate(o: { list: string; create: string; schema: string; input: string; createDescription?: string }): {
  get: OperationDoc;
  post: OperationDoc;
} {
  return {
    get: { summary: o.list, query: paging, responses: { 200: { description: 'One page', schema: page(o.schema) }, 400: bad } },
    post: {
      summary: o.create,
      ...(o.createDescription ? { description: o.createDescription } : {}),
      body: o.input,
      responses: { 201: { description: 'Created', schema: o.schema }, 400: bad, 409: conflict },
    },
  };
}

/** GET, PATCH and DELETE of one item named by `params` */
export function readUpdateDelete(o: {
  noun: string;
  schema: string;
  patch: string;
  params: Record<string, string>;
  patchDescription?: string;
  deleteSummary?: string;
}): { get: OperationDoc; patch: OperationDoc; delete: OperationDoc } {
  return {
    get: { summary: `Read ${o.noun}`, params: o.params, responses: { 200: { description: 'Found', schema: o.schema }, 404: notFound } },
    patch: {
      summary: `Update ${o.noun}`,
      ...(o.patchDescription ? { description: o.patchDescription } : {}),
      params: o.params,
      body: o.patch,
      responses: { 200: { description: 'Updated', schema: o.schema }, 400: bad, 404: notFound },
    },
    delete: { summary: o.deleteSummary ?? `Delete ${o.noun}`, params: o.params, responses: { 204: { description: 'Deleted' }, 404: notFound } },
  };
}
