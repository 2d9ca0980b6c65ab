import { entityComponentName, type JsonObject, type OpenApiEntity } from './openapi-components';

/** The admin API's OpenAPI operations on entities: collections, one entity, and the entity a child references. */

export const BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject) => ({ content: { 'application/json': { schema } } });
const requestBody = (name: string) => ({
  required: true,
  content: Object.fromEntries(BODY_TYPES.map((type) => [type, { schema: ref(name) }])),
});
const error = (description: string) => ({ description, ...json(ref('KongError')) });
const notFound = { description: 'Not found', ...json(ref('Message')) };

/** Where the operations of an entity sit: directly at `/{adminPath}`, or under one parent entity. */
export interface EntityPlacement {
  /** the parent's singular name (`service`), when the collection is the children of one parent */
  parent?: string;
}

function labelOf(entity: OpenApiEntity, placement: EntityPlacement): { id: string; summary: string; tag: string[] } {
  const under = placement.parent ? `-of-${placement.parent}` : '';
  return {
    id: `${entity.name}${under}`,
    summary: placement.parent ? ` of a ${placement.parent.replace(/_/g, ' ')}` : '',
    tag: [entity.adminPath],
  };
}

/** `GET` (one page) and `POST` (create) on a collection. */
export function entityCollectionOperations(entity: OpenApiEntity, placement: EntityPlacement = {}): JsonObject {
  const base = entityComponentName(entity);
  const label = labelOf(entity, placement);
  return {
    get: {
      operationId: `list-${label.id}`,
      tags: label.tag,
      summary: `List ${entity.adminPath}${label.summary}`,
      parameters: [
        { name: 'size', in: 'query', description: 'page size', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        { name: 'offset', in: 'query', description: 'the `offset` of the previous page', schema: { type: 'string' } },
        { name: 'tags', in: 'query', description: 'a,b = both tags; a/b = either', schema: { type: 'string' } },
      ],
      responses: {
        200: {
          description: 'One page',
          ...json({
            type: 'object',
            properties: {
              data: { type: 'array', items: ref(base) },
              offset: { type: 'string' },
              next: { type: ['string', 'null'] },
            },
            required: ['data', 'next'],
          }),
        },
        400: error('Invalid size, offset or tags'),
      },
    },
    post: {
      operationId: `create-${label.id}`,
      tags: label.tag,
      summary: `Create one of ${entity.adminPath}${label.summary}`,
      requestBody: requestBody(`${base}Input`),
      responses: {
        201: { description: 'Created', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        409: error('Unique violation'),
      },
    },
  };
}

/** `GET`, `PUT` (upsert), `PATCH` and `DELETE` of one entity. */
export function entityOperations(entity: OpenApiEntity, placement: EntityPlacement = {}): JsonObject {
  const base = entityComponentName(entity);
  const label = labelOf(entity, placement);
  const missing = placement.parent ? ` (or another ${placement.parent.replace(/_/g, ' ')}'s)` : '';
  return {
    get: {
      operationId: `get-${label.id}`,
      tags: label.tag,
      summary: `Read one of ${entity.adminPath}${label.summary}`,
      responses: { 200: { description: 'Found', ...json(ref(base)) }, 404: notFound },
    },
    put: {
      operationId: `upsert-${label.id}`,
      tags: label.tag,
      summary: `Create or replace one of ${entity.adminPath}${label.summary}`,
      description: 'Omitted fields return to their defaults. Answers 200 whether it created or replaced.',
      requestBody: requestBody(`${base}Input`),
      responses: {
        200: { description: 'Created or replaced', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        409: error('Unique violation'),
      },
    },
    patch: {
      operationId: `update-${label.id}`,
      tags: label.tag,
      summary: `Update fields of one of ${entity.adminPath}${label.summary}`,
      requestBody: requestBody(`${base}Patch`),
      responses: {
        200: { description: 'Updated', ...json(ref(base)) },
        400: error('Schema or foreign key violation'),
        404: notFound,
        409: error('Unique violation'),
      },
    },
    delete: {
      operationId: `delete-${label.id}`,
      tags: label.tag,
      summary: `Delete one of ${entity.adminPath}${label.summary}`,
      responses: placement.parent
        ? { 204: { description: 'Deleted' }, 404: { ...notFound, description: `Not found${missing}` } }
        : { 204: { description: 'Deleted, or was not there' }, 400: error('Still referenced by another entity') },
    },
  };
}

/** `GET /{children}/{c}/{field}`: the entity a child references through `field`. */
export function entityReferenceOperations(child: OpenApiEntity, field: string, parent: OpenApiEntity): JsonObject {
  return {
    get: {
      operationId: `get-${child.name}-${field}`,
      tags: [child.adminPath],
      summary: `Read the ${field.replace(/_/g, ' ')} one of ${child.adminPath} belongs to`,
      responses: { 200: { description: 'Found', ...json(ref(entityComponentName(parent))) }, 404: notFound },
    },
    put: {
      operationId: `upsert-${child.name}-${field}`,
      tags: [child.adminPath],
      summary: `Create or replace the ${field.replace(/_/g, ' ')} of one of ${child.adminPath}`,
      description: 'When it references none, one is created under a new id and referenced.',
      requestBody: requestBody(`${entityComponentName(parent)}Input`),
      responses: { 200: { description: 'Created or replaced', ...json(ref(entityComponentName(parent))) }, 400: error('Schema or foreign key violation'), 404: notFound },
    },
    patch: {
      operationId: `update-${child.name}-${field}`,
      tags: [child.adminPath],
      summary: `Update the ${field.replace(/_/g, ' ')} of one of ${child.adminPath}`,
      requestBody: requestBody(`${entityComponentName(parent)}Patch`),
      responses: { 200: { description: 'Updated', ...json(ref(entityComponentName(parent))) }, 400: error('Schema or foreign key violation'), 404: notFound },
    },
    delete: {
      operationId: `delete-${child.name}-${field}`,
      tags: [child.adminPath],
      summary: `Refused (405) when one of ${child.adminPath} references a ${field.replace(/_/g, ' ')}, as Kong`,
      responses: { 204: { description: 'Never answered: the delete is refused' }, 404: notFound, 405: error('Method not allowed') },
    },
  };
}

/** `id_or_key` for an entity with an endpoint key, else `id`. */
export function entityParamName(entity: OpenApiEntity): string {
  return entity.endpointKey ? 'id_or_key' : 'id';
}

export function entityPathParameter(entity: OpenApiEntity, name: string): JsonObject {
  return {
    name,
    in: 'path',
    required: true,
    description: entity.endpointKey ? `the id, or the ${entity.endpointKey} when not a UUID` : 'the id',
    schema: { type: 'string' },
  };
}
