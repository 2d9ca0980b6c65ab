import type { PluginContext, PluginResponse } from '../contract';
import { appendToJson, appendToList, asList, isJsonObject, isJsonType, jsonFields, paramFields } from '../shared/fields';
import { perConfig } from '../shared/per-config';
import { applyPlan, planOf, type Fields, type TransformPlan } from '../shared/transform-ops';
import { transformMultipart } from './multipart-body';
import type { RequestTransformerConfig } from './schema';
import { plansHaveTemplates, renderTemplates } from './templates';

interface RequestPlans {
  headers: TransformPlan | null;
  querystring: TransformPlan | null;
  body: TransformPlan | null;
  uri: string | null;
  /** some value is a template (`$(…)`), rendered per request */
  templated: boolean;
}

const plansOf = perConfig((config: RequestTransformerConfig): RequestPlans => {
  const { remove, rename, replace, add, append } = config;
  // header names keep the configured case (what goes upstream); lookups ignore case
  const headers = planOf(remove.headers, rename.headers, replace.headers, add.headers, append.headers);
  const querystring = planOf(remove.querystring, rename.querystring, replace.querystring, add.querystring, append.querystring);
  const body = planOf(remove.body, rename.body, replace.body, add.body, append.body);
  return { headers, querystring, body, uri: replace.uri, templated: plansHaveTemplates([headers, querystring, body], replace.uri) };
});

/** The plans for this request: the config's, with templates rendered against the client's request when it has any. */
function requestPlans(ctx: PluginContext, config: RequestTransformerConfig): RequestPlans {
  const plans = plansOf(config);
  if (!plans.templated) return plans;
  const rendered = renderTemplates(ctx, [plans.headers, plans.querystring, plans.body], plans.uri);
  const [headers, querystring, body] = rendered.plans;
  return { headers: headers ?? null, querystring: querystring ?? null, body: body ?? null, uri: rendered.uri, templated: false };
}

/**
 * Upstream headers as operation fields, names compared without case: read through earlier plugins' changes, written
 * back only where touched, each under the name as the config entry that wrote it spells it (Kong keeps the configured
 * case). A class, so a request allocates one object and no closures.
 */
class UpstreamHeaderFields implements Fields<string[]> {
  /** lower-case name → values (null: removed) and the name as configured */
  readonly touched = new Map<string, { name: string; values: string[] | null }>();

  constructor(private readonly ctx: PluginContext) {}

  get(name: string): string[] | undefined {
    const lower = name.toLowerCase();
    const touched = this.touched.get(lower);
    if (touched !== undefined) return touched.values ?? undefined;
    const upstream = this.ctx.upstream;
    const value = upstream.forwardedHeader ? upstream.forwardedHeader(lower) : this.ctx.req.headers[lower];
    if (value === undefined) return undefined;
    return typeof value === 'string' ? [value] : [...value];
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, values: string[]): void {
    this.touched.set(name.toLowerCase(), { name, values });
  }

  delete(name: string): void {
    this.touched.set(name.toLowerCase(), { name, values: null });
  }
}

function transformHeaders(ctx: PluginContext, plan: TransformPlan): void {
  const fields = new UpstreamHeaderFields(ctx);
  applyPlan(plan, fields, asList, appendToList);
  const upstream = ctx.upstream;
  for (const { name, values } of fields.touched.values()) {
    if (values === null) upstream.removeHeader(name);
    else if (values.length === 1 || upstream.setHeaderValues === undefined) upstream.setHeader(name, values.join(', '));
    else upstream.setHeaderValues(name, values);
  }
}

function transformQuery(ctx: PluginContext, plan: TransformPlan): void {
  const query = ctx.upstream.forwardedQuery?.();
  if (query === undefined) return;
  applyPlan(plan, paramFields(query), asList, appendToList);
}

function contentTypeOf(ctx: PluginContext): string | undefined {
  const value = ctx.upstream.forwardedHeader ? ctx.upstream.forwardedHeader('content-type') : ctx.req.headers['content-type'];
  return typeof value === 'string' ? value : value?.[0];
}

/** Form, multipart and JSON bodies are rewritten (read whole, within the buffered-body limit); others pass unchanged. */
async function transformBody(ctx: PluginContext, plan: TransformPlan): Promise<void> {
  const contentType = contentTypeOf(ctx);
  if (contentType === undefined) return;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams((await ctx.req.readBody()).toString('utf8'));
    applyPlan(plan, paramFields(form), asList, appendToList);
    ctx.upstream.setBody(Buffer.from(form.toString()));
    return;
  }
  if (type === 'multipart/form-data') {
    const rewritten = transformMultipart(await ctx.req.readBody(), contentType, plan);
    if (rewritten !== null) ctx.upstream.setBody(rewritten);
    return;
  }
  if (!isJsonType(contentType)) return;
  const raw = await ctx.req.readBody();
  let parsed: unknown = {};
  if (raw.length > 0) {
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      return;
    }
  }
  if (!isJsonObject(parsed)) return;
  applyPlan(plan, jsonFields(parsed), (text) => text, (existing, text) => appendToJson(existing, text));
  ctx.upstream.setBody(Buffer.from(JSON.stringify(parsed)));
}

/**
 * Kong's request-transformer: `replace.uri`, then `http_method`, then headers, body and query string, each with
 * remove → rename → replace → add → append. The body is read only when a body operation is configured.
 */
export function requestTransformerAccess(ctx: PluginContext, config: RequestTransformerConfig): PluginResponse | void | Promise<void> {
  const plans = requestPlans(ctx, config);
  if (plans.uri !== null) ctx.upstream.setPath?.(plans.uri);
  if (config.http_method !== null) {
    ctx.upstream.setMethod?.(config.http_method);
    if (BODYLESS_METHODS.has(config.http_method) && isForm(contentTypeOf(ctx))) return formIntoQuery(ctx).then(() => transformRest(ctx, plans));
  }
  return transformRest(ctx, plans);
}

/** Methods whose requests carry their arguments in the query string: a form body moves there (Kong's rule). */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'TRACE']);

function isForm(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** The form's fields join the forwarded query string, replacing arguments of the same name. */
async function formIntoQuery(ctx: PluginContext): Promise<void> {
  const form = new URLSearchParams((await ctx.req.readBody()).toString('utf8'));
  const query = ctx.upstream.forwardedQuery?.();
  if (query === undefined) return;
  const fields = paramFields(query);
  for (const name of new Set(form.keys())) fields.set(name, form.getAll(name));
}

function transformRest(ctx: PluginContext, plans: RequestPlans): void | Promise<void> {
  if (plans.headers !== null) transformHeaders(ctx, plans.headers);
  if (plans.body === null) {
    if (plans.querystring !== null) transformQuery(ctx, plans.querystring);
    return;
  }
  const query = plans.querystring;
  return transformBody(ctx, plans.body).then(() => {
    if (query !== null) transformQuery(ctx, query);
  });
}
