export { adminOpenApiDocument, templateOf, ADMIN_TOKEN_HEADER_NAME, type AdminDocumentInput } from './admin-document';
export { CORE_ROUTE_DOCS, CORE_TAG_DESCRIPTIONS } from './docs/core-routes';
export { RBAC_ROUTE_DOCS, RBAC_TAG_DESCRIPTIONS, rbacSchemas } from './docs/rbac-routes';
export type { OperationDoc, EntityRoute, RouteDoc, RouteDocs } from './route-doc';
export { GATEWAY_ROUTE_DOCS, GATEWAY_TAG_DESCRIPTIONS } from './docs/gateway-routes';
