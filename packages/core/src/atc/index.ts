export * from './ast';
export * from './ip';
export { AtcSyntaxError, formatAtcError, parseAtc } from './parse';
export { amendAtcExpression, atcFieldType, checkAtcExpression } from './validate';
