import type { JsonObject } from '@gatehouse/core';

/**
 * What the OpenAPI document says about one admin operation. Entity routes carry an `EntityRoute` and get everything
 * from the entity's definition; custom routes carry an `OperationDoc` (given when the route is added, or found in
 * the catalogue under `openapi/docs/`). A route with neither still appears, with a summary made from its path.
 */
export interface OperationDoc {
  summary: string;
  description?: string;
  /** the group the operation is listed under; default: the path's first segment */
  tag?: string;
  /** descriptions of path parameters, by their name in the route (`:user` → `user`) */
  params?: Record<string, string>;
  query?: Array<{ name: string; description: string; schema?: JsonObject }>;
  /** a component name (`ConsumerInput`) or an inline JSON Schema of the request body */
  body?: string | JsonObject;
  /** status → description, with a component name or an inline JSON Schema of the JSON body */
  responses: Record<number, { description: string; schema?: string | JsonObject }>;
}

/** The generated endpoints of one entity kind (`routes/entity-routes.ts`), by their shape. */
export type EntityRoute =
  | { entity: string; shape: 'collection' | 'one' }
  | { entity: string; shape: 'nested-collection' | 'nested-one'; parent: string }
  | { entity: string; shape: 'reference'; field: string; parent: string };

export type RouteDoc = OperationDoc | EntityRoute;

export function isEntityRoute(doc: RouteDoc): doc is EntityRoute {
  return 'entity' in doc && 'shape' in doc;
}

/** What `ResourceRegistry.add` takes beside the handlers: an entity route, or one `OperationDoc` per method. */
export type RouteDocs = EntityRoute | { get?: OperationDoc; post?: OperationDoc; put?: OperationDoc; patch?: OperationDoc; delete?: OperationDoc };

/** The doc of one method of a route added with `docs`. */
export function docOf(docs: RouteDocs | undefined, method: 'get' | 'post' | 'put' | 'patch' | 'delete'): RouteDoc | undefined {
  if (!docs) return undefined;
  if ('shape' in docs) return docs;
  return docs[method];
}
