import { z } from 'zod';
import { defineEntity } from './definition';
import { baseFieldsWithUpdate, nullableForeign, tags, utf8Name } from './fields';
import { linearRegexError } from './route-regex';
import { grpcRouteDefaults, routeProtocolErrors } from './route-protocol-checks';

/** Kong 3.9's eight protocols, in its (sorted) order; `ws`/`wss` are Kong Enterprise's and refused. */
export const ROUTE_PROTOCOLS = ['grpc', 'grpcs', 'http', 'https', 'tcp', 'tls', 'tls_passthrough', 'udp'] as const;

/** A regex path (`~/…`) must compile on the linear-time engine (decision 17): 400 with `fields.paths` otherwise. */
function refuseNonLinearRegex(path: string, ctx: z.RefinementCtx): void {
  if (!path.startsWith('~/')) return;
  const error = linearRegexError(path.slice(1));
  if (error !== null) ctx.addIssue({ code: 'custom', message: error });
}

/** A header value regex (`~*…`) must compile on the linear-time engine too. */
function refuseNonLinearHeaderRegex(value: string, ctx: z.RefinementCtx): void {
  if (!value.startsWith('~*')) return;
  const error = linearRegexError(value.slice(2));
  if (error !== null) ctx.addIssue({ code: 'custom', message: error });
}

export const routeSchema = z
  .object({
    ...baseFieldsWithUpdate,
    name: utf8Name().nullable().default(null),
    protocols: z.array(z.enum(ROUTE_PROTOCOLS)).min(1).default(['http', 'https']),
    methods: z
      .array(z.string().regex(/^[A-Z]+$/, 'invalid value: must be uppercase'))
      .nullable()
      .default(null),
    hosts: z.array(z.string().min(1)).nullable().default(null),
    paths: z
      .array(
        z
          .string()
          .refine((p) => p.startsWith('/') || p.startsWith('~/'), 'should start with: / (fixed path) or ~/ (regex path)')
          .superRefine(refuseNonLinearRegex),
      )
      .nullable()
      .default(null),
    headers: z.record(z.string(), z.array(z.string().superRefine(refuseNonLinearHeaderRegex))).nullable().default(null),
    https_redirect_status_code: z.union([z.literal(426), z.literal(301), z.literal(302), z.literal(307), z.literal(308)]).default(426),
    regex_priority: z.number().int().default(0),
    strip_path: z.boolean().default(true),
    path_handling: z.enum(['v0', 'v1']).default('v0'),
    preserve_host: z.boolean().default(false),
    request_buffering: z.boolean().default(true),
    response_buffering: z.boolean().default(true),
    snis: z.array(z.string()).nullable().default(null),
    sources: z.array(z.object({ ip: z.string().optional(), port: z.number().int().optional() })).nullable().default(null),
    destinations: z.array(z.object({ ip: z.string().optional(), port: z.number().int().optional() })).nullable().default(null),
    tags: tags(),
    service: nullableForeign(),
  })
  .strict();
export type Route = z.infer<typeof routeSchema> & {
  id: string;
  created_at: number;
  updated_at: number;
  /** set only under `router_flavor = expressions` (route-expressions.ts) */
  expression?: string | null;
  priority?: number;
};

export const routes = defineEntity({
  name: 'routes',
  adminPath: 'routes',
  schema: routeSchema,
  endpointKey: 'name',
  uniques: ['name'],
  foreignKeys: [{ field: 'service', entity: 'services', onDelete: 'restrict', required: false }],
  updatedAt: true,
  normalizeInput: grpcRouteDefaults,
  check: routeProtocolErrors,
});
