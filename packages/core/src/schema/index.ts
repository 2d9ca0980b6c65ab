export { decodeFormPairs } from './form';
export { coerceInput, type CoerceOptions } from './coerce';
export { validateWith, checkWith, mergeFieldErrors, fieldErrorsFromIssues, kongErrorMap, type CheckResult } from './validate';
export {
  kongSchemaOf,
  kongEntitySchemaOf,
  kongPluginSchemaOf,
  kongFieldOf,
  type KongField,
  type KongFieldEntry,
  type KongSchema,
  type KongSchemaOptions,
  type KongPluginSchemaOptions,
} from './kong-schema';
export { openApiDocument, type OpenApiDocument, type OpenApiEntity, type OpenApiPlugin, type OpenApiInput } from './openapi';
export {
  structuralViolations,
  boundViolations,
  findingsToFields,
  MAX_STRING_LENGTH,
  LONG_TEXT_MAX,
  MAX_ARRAY_ITEMS,
  MAX_NESTING,
  type Finding,
} from './input-bounds';
export {
  openApiSchemas,
  entityComponents,
  entityCollectionOperations,
  entityOperations,
  entityReferenceOperations,
  entityParamName,
  entityPathParameter,
  entityComponentName,
  componentName,
  singular,
  jsonSchemaOf,
  BODY_TYPES,
  type EntityPlacement,
  type JsonObject,
} from './openapi';
