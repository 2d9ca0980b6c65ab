import type protobuf from 'protobufjs';
import { protoFile, type ProtoMethod } from '../shared/grpc/proto-file';

/** One HTTP binding of an RPC (a `google.api.http` rule): how a REST request finds it and fills its message. */
export interface HttpBinding {
  regex: RegExp;
  /** the path template's variables, in the order of the regex's groups */
  variables: string[];
  /** the RPC's gRPC path */
  rpcPath: string;
  input: protobuf.Type;
  output: protobuf.Type;
  /** the rule's `body`: `*`, a field name, or null (then the query string fills the message) */
  body: string | null;
}

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** `{name}`, `{name=*}`, `{name=**}`, `{name=a/*}`: a variable of a path template, as Kong reads it. */
const VARIABLE = /\{([-_.~0-9a-zA-Z]+)=?((?:(?:\*|\*\*|[-_.~0-9a-zA-Z])\/?)+)?\}/g;

const escapeLiteral = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

/**
 * A path template as a regex: a plain variable or `*` takes one segment, `**` the rest of the path, and the other
 * characters of the template are matched as written.
 */
export function templateRegex(template: string): { regex: RegExp; variables: string[] } {
  const variables: string[] = [];
  let source = '';
  let at = 0;
  for (const match of template.matchAll(VARIABLE)) {
    source += escapeLiteral(template.slice(at, match.index));
    variables.push(match[1]!);
    const segments = match[2];
    source += segments === undefined || segments === '*' ? '([^/]+)' : `(${escapeLiteral(segments).replace(/\\\*\\\*/g, '.+').replace(/\\\*/g, '[^/]+')})`;
    at = match.index + match[0].length;
  }
  source += escapeLiteral(template.slice(at));
  return { regex: new RegExp(`^${source}$`), variables };
}

/** The rule and the rules of its `additional_bindings` (one level, as Kong reads them). */
function rulesOf(http: Record<string, unknown>): Record<string, unknown>[] {
  const rules = [http];
  const more = http.additional_bindings;
  for (const rule of Array.isArray(more) ? more : [more]) if (rule !== null && typeof rule === 'object') rules.push(rule as Record<string, unknown>);
  return rules;
}

function addBindings(method: ProtoMethod, into: Map<string, HttpBinding[]>): void {
  for (const rule of rulesOf(method.http!)) {
    const body = typeof rule.body === 'string' ? rule.body : null;
    for (const key of Object.keys(rule)) {
      const verb = key.toLowerCase();
      const template = rule[key];
      if (!HTTP_METHODS.has(verb) || typeof template !== 'string') continue;
      const { regex, variables } = templateRegex(template);
      const list = into.get(verb) ?? [];
      list.push({ regex, variables, rpcPath: method.path, input: method.input, output: method.output, body });
      into.set(verb, list);
    }
  }
}

const known = new Map<string, Map<string, HttpBinding[]>>();

/** The HTTP bindings of a `.proto` file's RPCs by lower-case method, parsed once per process. */
export function bindingsOf(file: string): Map<string, HttpBinding[]> {
  let bindings = known.get(file);
  if (bindings === undefined) {
    bindings = new Map();
    for (const method of protoFile(file).methods) if (method.http !== null) addBindings(method, bindings);
    known.set(file, bindings);
  }
  return bindings;
}
