import {
  componentName,
  entityCollectionOperations,
  entityOperations,
  entityParamName,
  entityReferenceOperations,
  openApiSchemas,
  singular,
  type JsonObject,
  type OpenApiEntity,
  type OpenApiPlugin,
} from '@gatehouse/core';
import type { Method, RegisteredRoute } from '../http/resources';
import { isEntityRoute, type EntityRoute, type OperationDoc, type RouteDoc } from './route-doc';

/**
 * The admin API's OpenAPI 3.1 document, made from the routes the app registered: entity routes from the entities'
 * schemas, custom routes from their `OperationDoc` (given at registration or in the catalogue), anything else from its
 * path alone, so that no registered operation is ever missing. The result depends only on its input: the same app
 * gives the same bytes.
 */
export interface AdminDocumentInput {
  version: string;
  routes: RegisteredRoute[];
  entities: OpenApiEntity[];
  plugins: OpenApiPlugin[];
  /** docs of custom routes by route path (`/rbac/users/:user`) and method, used when the route was added without one */
  catalogue: Record<string, Partial<Record<Method, OperationDoc>>>;
  /** descriptions of the tags (the first path segment, unless an operation names its own) */
  tagDescriptions: Record<string, string>;
  /** components referenced by custom docs that are not entities (`Api` of the legacy `/apis`) */
  extraSchemas?: Record<string, JsonObject>;
}

export const ADMIN_TOKEN_HEADER_NAME = 'Kong-Admin-Token';

const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];

const DESCRIPTION = `Kong-compatible admin API of Gatehouse.

Bodies may be JSON, form-urlencoded (dotted keys \`config.anonymous\`, arrays \`paths[]\`, \`paths[1]\`) or multipart.
Collections page with \`size\` and \`offset\`; errors carry Kong's body \`{code, name, message, fields}\`.
Every path also answers under a workspace prefix (\`/{workspace}/services\`, the second server below).
With RBAC enforced (\`GATEHOUSE_ENFORCE_RBAC\`), requests carry an RBAC user's token in \`${ADMIN_TOKEN_HEADER_NAME}\`.`;

export function adminOpenApiDocument(input: AdminDocumentInput): JsonObject {
  const entities = new Map(input.entities.map((e) => [e.name, e]));
  const entityOf = (name: string): OpenApiEntity => {
    const entity = entities.get(name);
    if (!entity) throw new Error(`OpenAPI: route of an unregistered entity '${name}'`);
    return entity;
  };

  const paths: Record<string, JsonObject> = {};
  const usedIds = new Set<string>();
  const tags = new Set<string>();
  const routes = [...input.routes].sort((a, b) => compare(templateOf(a.path, {}), templateOf(b.path, {})));

  for (const route of routes) {
    const docs = route.operations.map(({ method, doc }) => ({ method, doc: doc ?? input.catalogue[route.path]?.[method] }));
    const names = parameterNames(route.path, docs, entityOf);
    const template = templateOf(route.path, names.rename);
    const item: JsonObject = paths[template] ?? {};
    if (names.parameters.length) item.parameters = names.parameters;
    for (const method of METHODS) {
      const found = docs.find((d) => d.method === method);
      if (!found) continue;
      const operation = operationOf(method, template, found.doc, entityOf);
      operation.operationId = unique(String(operation.operationId), usedIds);
      operation.responses = { ...(operation.responses as JsonObject), ...RBAC_RESPONSES };
      for (const tag of operation.tags as string[]) tags.add(tag);
      item[method] = operation;
    }
    paths[template] = item;
  }

  return {
    openapi: '3.1.0',
    info: { title: 'Gatehouse Admin API', version: input.version, description: DESCRIPTION },
    servers: [
      { url: '/', description: 'this admin API, default workspace' },
      {
        url: '/{workspace}',
        description: 'the same paths in another workspace',
        variables: { workspace: { default: 'default', description: 'a workspace name' } },
      },
    ],
    security: [{ adminToken: [] }, {}],
    tags: [...tags].sort(compare).map((name) => ({ name, description: input.tagDescriptions[name] ?? `The ${name} endpoints.` })),
    paths,
    components: {
      schemas: withPluginConfigs({ ...openApiSchemas(input.entities, input.plugins), ...(input.extraSchemas ?? {}) }, input.plugins),
      responses: {
        Unauthorized: { description: 'RBAC enforced and no valid token', content: { 'application/json': { schema: ref('Message') } } },
        Forbidden: { description: 'RBAC enforced and the token lacks the permission', content: { 'application/json': { schema: ref('Message') } } },
      },
      securitySchemes: {
        adminToken: {
          type: 'apiKey',
          in: 'header',
          name: ADMIN_TOKEN_HEADER_NAME,
          description: 'an RBAC user token; needed only when RBAC is enforced',
        },
      },
    },
  };
}

/** A plugin's `config` is the config of the plugin it names: one of the plugin config components. */
function withPluginConfigs(schemas: Record<string, JsonObject>, plugins: OpenApiPlugin[]): Record<string, JsonObject> {
  if (plugins.length === 0) return schemas;
  const configs = (suffix: string) => ({
    description: "the config of the plugin named by `name` (see that plugin's component)",
    anyOf: plugins.map((p) => ref(`${componentName(p.name)}Config${suffix}`)),
  });
  for (const [name, suffix] of [['Plugin', ''], ['PluginInput', 'Input'], ['PluginPatch', 'Input']] as const) {
    const schema = schemas[name];
    const properties = schema?.properties as Record<string, JsonObject> | undefined;
    if (!schema || !properties?.config) continue;
    schemas[name] = { ...schema, properties: { ...properties, config: configs(suffix) } };
  }
  return schemas;
}

const RBAC_RESPONSES = {
  401: { $ref: '#/components/responses/Unauthorized' },
  403: { $ref: '#/components/responses/Forbidden' },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** plain code-point order: the same in every locale */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function unique(id: string, used: Set<string>): string {
  let candidate = id;
  for (let n = 2; used.has(candidate); n++) candidate = `${id}-${n}`;
  used.add(candidate);
  return candidate;
}

/** `/rbac/users/:user` → `/rbac/users/{user}`, `…/:workspace/*endpoint` → `…/{workspace}/{endpoint}`, names renamed. */
export function templateOf(path: string, rename: Record<string, string>): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  return trimmed.replace(/[:*]([A-Za-z0-9_]+)/g, (_m, name: string) => `{${rename[name] ?? name}}`);
}

function routeParams(path: string): Array<{ name: string; wildcard: boolean }> {
  return [...path.matchAll(/([:*])([A-Za-z0-9_]+)/g)].map((m) => ({ name: m[2]!, wildcard: m[1] === '*' }));
}

/** The path parameters of a route, named after the entity they identify on entity routes. */
function parameterNames(
  path: string,
  docs: Array<{ method: Method; doc?: RouteDoc }>,
  entityOf: (name: string) => OpenApiEntity,
): { rename: Record<string, string>; parameters: JsonObject[] } {
  const entityDoc = docs.map((d) => d.doc).find((d): d is EntityRoute => d !== undefined && isEntityRoute(d));
  const described: Record<string, string> = {};
  for (const { doc } of docs) if (doc && !isEntityRoute(doc)) Object.assign(described, doc.params ?? {});
  const rename: Record<string, string> = {};
  const descriptions: Record<string, string> = {};

  if (entityDoc) {
    const entity = entityOf(entityDoc.entity);
    rename.ref = entityParamName(entity);
    descriptions.ref = entity.endpointKey ? `the id, or the ${entity.endpointKey} when not a UUID` : 'the id';
    if ('parent' in entityDoc && entityDoc.shape !== 'reference') {
      const parent = entityOf(entityDoc.parent);
      const parentName = singular(parent.name);
      rename.parent = `${parentName}_${entityParamName(parent)}`;
      descriptions.parent = parent.endpointKey
        ? `the ${parentName.replace(/_/g, ' ')}'s id, or its ${parent.endpointKey} when not a UUID`
        : `the ${parentName.replace(/_/g, ' ')}'s id`;
    }
  }

  const parameters = routeParams(path).map(({ name, wildcard }) => ({
    name: rename[name] ?? name,
    in: 'path',
    required: true,
    description:
      descriptions[name] ?? described[name] ?? (wildcard ? `the rest of the path, \`/\` included` : `the ${name.replace(/_/g, ' ')}`),
    schema: { type: 'string' },
  }));
  return { rename, parameters };
}

function operationOf(method: Method, template: string, doc: RouteDoc | undefined, entityOf: (name: string) => OpenApiEntity): JsonObject {
  if (doc && isEntityRoute(doc)) return entityOperation(method, doc, entityOf);
  if (doc) return customOperation(method, template, doc);
  return {
    operationId: operationIdOf(method, template),
    tags: [tagOf(template)],
    summary: `${method.toUpperCase()} ${template}`,
    responses: { 200: { description: 'Success' }, 400: { description: 'Bad request', content: { 'application/json': { schema: ref('KongError') } } } },
  };
}

function entityOperation(method: Method, doc: EntityRoute, entityOf: (name: string) => OpenApiEntity): JsonObject {
  const entity = entityOf(doc.entity);
  let operations: JsonObject;
  if (doc.shape === 'collection') operations = entityCollectionOperations(entity);
  else if (doc.shape === 'one') operations = entityOperations(entity);
  else if (doc.shape === 'reference') operations = entityReferenceOperations(entity, doc.field, entityOf(doc.parent));
  else if ('parent' in doc) {
    const placement = { parent: singular(entityOf(doc.parent).name) };
    operations = doc.shape === 'nested-collection' ? entityCollectionOperations(entity, placement) : entityOperations(entity, placement);
  } else operations = {};
  const operation = operations[method] as JsonObject | undefined;
  if (!operation) throw new Error(`OpenAPI: no ${method} operation for the ${doc.shape} routes of ${doc.entity}`);
  return { ...operation };
}

function customOperation(method: Method, template: string, doc: OperationDoc): JsonObject {
  const schemaOf = (schema: string | JsonObject) => (typeof schema === 'string' ? ref(schema) : schema);
  const operation: JsonObject = {
    operationId: operationIdOf(method, template),
    tags: [doc.tag ?? tagOf(template)],
    summary: doc.summary,
  };
  if (doc.description) operation.description = doc.description;
  if (doc.query?.length) {
    operation.parameters = doc.query.map((q) => ({ name: q.name, in: 'query', description: q.description, schema: q.schema ?? { type: 'string' } }));
  }
  if (doc.body !== undefined) {
    const schema = schemaOf(doc.body);
    operation.requestBody = {
      required: true,
      content: { 'application/json': { schema }, 'application/x-www-form-urlencoded': { schema }, 'multipart/form-data': { schema } },
    };
  }
  operation.responses = Object.fromEntries(
    Object.entries(doc.responses).map(([status, response]) => [
      status,
      response.schema === undefined
        ? { description: response.description }
        : { description: response.description, content: { 'application/json': { schema: schemaOf(response.schema) } } },
    ]),
  );
  return operation;
}

/** `get /rbac/users/{user}/roles` → `get-rbac-users-user-roles` */
function operationIdOf(method: Method, template: string): string {
  const words = template
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+/g, '_'));
  return [method, ...(words.length ? words : ['root'])].join('-');
}

function tagOf(template: string): string {
  const first = template.split('/')[1] ?? '';
  return first === '' || first.startsWith('{') ? 'node' : first;
}
