import { z } from 'zod';
import { checkAtcExpression } from '../atc/validate';
import type { FieldErrors } from '../errors';
import { defineEntity } from './definition';
import { routeProtocolErrors } from './route-protocol-checks';
import { routes, routeSchema } from './routes';

/**
 * Kong's `router_flavor` (`GATEHOUSE_ROUTER_FLAVOR`). `traditional_compatible` is the default and the router every
 * flavor's traditional routes go through; `traditional` is accepted and routes as `traditional_compatible` does;
 * `expressions` adds the route fields `expression` and `priority` (Kong 3.9 db/schema/entities/routes.lua).
 */
export const ROUTER_FLAVORS = ['traditional', 'traditional_compatible', 'expressions'] as const;
export type RouterFlavor = (typeof ROUTER_FLAVORS)[number];

/** Kong's bound on `priority`: 2^46 - 1. */
export const MAX_ROUTE_PRIORITY = 2 ** 46 - 1;

export const expressionsRouteSchema = routeSchema.extend({
  expression: z.string().max(65536).nullable().default(null),
  priority: z.number().int().min(0).max(MAX_ROUTE_PRIORITY).default(0),
});

const LEAD = 'Router Expression failed validation: ';
const OTHERS = "'methods', 'hosts', 'paths', 'headers', 'snis', 'sources' or 'destinations'";
const MATCH_FIELDS = ['snis', 'sources', 'destinations', 'methods', 'hosts', 'paths', 'headers'];

function empty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/** Kong's `validate_route` (expressions flavor): an expression stands alone, parses and type-checks. */
function expressionError(entity: Record<string, unknown>): string | null {
  const expression = entity.expression;
  const hasExpression = typeof expression === 'string';
  const hasOthers = MATCH_FIELDS.some((f) => !empty(entity[f]));
  if (!hasExpression && !hasOthers) return null;
  if (hasExpression && hasOthers) return `${LEAD}cannot set 'expression' with ${OTHERS} simultaneously`;
  if (hasExpression && typeof entity.regex_priority === 'number' && entity.regex_priority !== 0) {
    return `${LEAD}cannot set 'regex_priority' with 'expression' simultaneously`;
  }
  if (hasOthers && typeof entity.priority === 'number' && entity.priority !== 0) {
    return `${LEAD}cannot set 'priority' with ${OTHERS} simultaneously`;
  }
  if (!hasExpression) return null;
  const protocols = (entity.protocols as string[] | undefined) ?? ['http', 'https'];
  const checked = checkAtcExpression(expression, protocols);
  return 'error' in checked ? `${LEAD}${checked.error}` : null;
}

/** Every check of a route under the expressions flavor; null when it is acceptable. */
export function expressionsRouteErrors(entity: Record<string, unknown>): FieldErrors | null {
  const protocolErrors = routeProtocolErrors(entity, { expressions: true });
  if (protocolErrors !== null && protocolErrors['@entity'] === undefined) return protocolErrors;
  const error = expressionError(entity);
  if (error === null) return protocolErrors;
  const entityErrors = [error, ...((protocolErrors?.['@entity'] as string[] | undefined) ?? [])];
  return { ...protocolErrors, '@entity': entityErrors };
}

/** The routes entity as the expressions flavor validates it. */
export const expressionsRoutes = defineEntity({
  ...routes,
  schema: expressionsRouteSchema,
  check: expressionsRouteErrors,
});

/** The routes entity of a router flavor. */
export function routesEntityFor(flavor: RouterFlavor | undefined): typeof routes | typeof expressionsRoutes {
  return flavor === 'expressions' ? expressionsRoutes : routes;
}
