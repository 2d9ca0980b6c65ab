import type { PluginContext } from '../contract';
import { newExchange } from '../pdk/exchange';
import { captureTable, headerTable, queryTable } from '../pdk/lua/host-request';
import { luaSandbox } from '../pdk/lua/sandbox';
import type { LuaChunk } from '../pdk/lua/vm';
import type { TransformPlan } from '../shared/transform-ops';

/**
 * Kong's request-transformer templates (Penlight templates, `#` escapes off): `$(expr)` in a value is a Lua
 * expression evaluated in a read-only environment of `headers`, `query_params`, `uri_captures`, `shared` (kong.ctx.
 * shared), `type` and a refusing `require`, all as the client sent them; nil or false renders as ''. Anything else in
 * the value is literal. A template that fails to compile or to render ends the request with 500 and a log line.
 */

const MARKER = '$(';

export function isTemplate(value: string): boolean {
  return value.includes(MARKER);
}

/** The expressions of a template: `$(` up to its balancing `)`; text outside them is literal. */
function pieces(template: string): Array<{ literal: string } | { expr: string }> {
  const out: Array<{ literal: string } | { expr: string }> = [];
  let from = 0;
  for (;;) {
    const start = template.indexOf(MARKER, from);
    if (start < 0) break;
    let depth = 0;
    let end = -1;
    for (let i = start + 1; i < template.length; i++) {
      if (template[i] === '(') depth++;
      else if (template[i] === ')' && --depth === 0) {
        end = i;
        break;
      }
    }
    if (end < 0) break;
    if (start > from) out.push({ literal: template.slice(from, start) });
    out.push({ expr: template.slice(start + 2, end) });
    from = end + 1;
  }
  if (from < template.length) out.push({ literal: template.slice(from) });
  return out;
}

function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${byte.toString().padStart(3, '0')}`;
  return `${out}"`;
}

/** The Lua chunk a template compiles to: it takes the environment and returns the rendered text. */
export function templateChunkSource(template: string): string {
  const parts = pieces(template).map((piece) => ('literal' in piece ? luaString(piece.literal) : `__ts((${piece.expr}) or '')`));
  // one line, so Lua's messages name line 1 as Penlight's do
  return `local __ts, __cc = tostring, table.concat local _ENV = ... return __cc({ ${parts.join(', ')} })`;
}

export class TemplateError extends Error {}

/** Renders every templated value of the plans (and `replace.uri`) for this request. */
export function renderTemplates(ctx: PluginContext, plans: readonly (TransformPlan | null)[], uri: string | null): { plans: Array<TransformPlan | null>; uri: string | null } {
  const sandbox = luaSandbox();
  const ex = newExchange(ctx, 'access', 'request-transformer', ctx.runtime.log ?? { error: () => undefined });
  const values = { headers: headerTable(ex), query: queryTable(ctx.req.query), captures: captureTable(ex) };
  return sandbox.withTemplateEnv(ex, values, (run) => {
    const render = (template: string): string => {
      if (!isTemplate(template)) return template;
      let chunk: LuaChunk;
      try {
        sandbox.refuseWhenOff();
        chunk = sandbox.compile(templateChunkSource(template), 'TMP');
        return run(chunk);
      } catch (err) {
        throw new TemplateError(`[request-transformer] failed to render the template ${template}, error:${err instanceof Error ? err.message : String(err)}`);
      }
    };
    const pairs = (list: Array<[string, string]>) => list.map(([name, value]): [string, string] => [name, render(value)]);
    return {
      plans: plans.map((plan) => (plan === null ? null : { remove: plan.remove, rename: pairs(plan.rename), replace: pairs(plan.replace), add: pairs(plan.add), append: pairs(plan.append) })),
      uri: uri === null ? null : render(uri),
    };
  });
}

/** Whether any value of the plans (or the uri) is a template. */
export function plansHaveTemplates(plans: readonly (TransformPlan | null)[], uri: string | null): boolean {
  if (uri !== null && isTemplate(uri)) return true;
  return plans.some((plan) => plan !== null && [plan.rename, plan.replace, plan.add, plan.append].some((list) => list.some(([, value]) => isTemplate(value))));
}
