import type { PluginContext, UpstreamResponse } from '../contract';
import { splitPair } from '../shared/colon-pairs';
import { appendToJson, appendToList, asList, isJsonObject, isJsonType, jsonFields } from '../shared/fields';
import { perConfig } from '../shared/per-config';
import { applyPlan, planOf, type Fields, type TransformPlan } from '../shared/transform-ops';
import type { ResponseTransformerConfig } from './schema';

type JsonType = 'boolean' | 'number' | 'string';

interface ResponsePlans {
  headers: TransformPlan | null;
  json: TransformPlan | null;
  /** per JSON field name, the type its value is given (`json_types`, position by position) */
  types: Map<string, JsonType>;
}

function typesOf(pairs: readonly string[], types: readonly JsonType[], into: Map<string, JsonType>): void {
  pairs.forEach((entry, i) => {
    const type = types[i];
    if (type !== undefined) into.set(`${splitPair(entry)[0]}\u0000${entry}`, type);
  });
}

const plansOf = perConfig((config: ResponseTransformerConfig): ResponsePlans => {
  const { remove, rename, replace, add, append } = config;
  const types = new Map<string, JsonType>();
  typesOf(replace.json, replace.json_types, types);
  typesOf(add.json, add.json_types, types);
  typesOf(append.json, append.json_types, types);
  return {
    headers: planOf(remove.headers, rename.headers, replace.headers, add.headers, append.headers, true),
    json: planOf(remove.json, rename.json, replace.json, add.json, append.json),
    types,
  };
});

/** A configured value as JSON: a string unless `json_types` says boolean or number. */
export function typedValue(text: string, type: JsonType | undefined): unknown {
  if (type === 'boolean') return text === 'true';
  if (type === 'number') {
    const number = Number(text);
    return Number.isNaN(number) ? text : number;
  }
  return text;
}

function headerFields(headers: Record<string, string | string[]>): Fields<string[]> {
  return {
    has: (name) => headers[name] !== undefined,
    get: (name) => {
      const value = headers[name];
      return value === undefined ? undefined : typeof value === 'string' ? [value] : value;
    },
    set: (name, values) => {
      headers[name] = values.length === 1 ? values[0]! : values;
    },
    delete: (name) => {
      delete headers[name];
    },
  };
}

function transformJson(body: Buffer, plan: TransformPlan, types: Map<string, JsonType>): Buffer {
  if (body.length === 0) return body;
  const parsed: unknown = JSON.parse(body.toString('utf8'));
  if (!isJsonObject(parsed)) return body;
  const typeOf = (name: string, text: string) => types.get(`${name}\u0000${name}:${text}`);
  applyPlan(
    plan,
    jsonFields(parsed),
    (text, name) => typedValue(text, typeOf(name, text)),
    (existing, text, name) => appendToJson(existing, typedValue(text, typeOf(name, text))),
  );
  return Buffer.from(JSON.stringify(parsed));
}

/**
 * Kong's response-transformer on the upstream's response: headers with remove → rename → replace → add → append,
 * then, for JSON responses with a JSON operation configured, the body's top-level members the same way. Other
 * responses stream untouched.
 */
export function responseTransformerResponse(ctx: PluginContext, config: ResponseTransformerConfig, res: UpstreamResponse): void {
  const plans = plansOf(config);
  if (plans.headers !== null) applyPlan(plans.headers, headerFields(res.headers), asList, appendToList);
  const json = plans.json;
  // responses without a body (HEAD, 204, 304) keep their headers as sent, Content-Length included
  if (json === null || ctx.req.method === 'HEAD' || res.status === 204 || res.status === 304) return;
  const contentType = res.headers['content-type'];
  if (!isJsonType(typeof contentType === 'string' ? contentType : contentType?.[0])) return;
  res.transformBody((body) => transformJson(body, json, plans.types));
}
