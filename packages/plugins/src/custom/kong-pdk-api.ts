import type { PdkExchange } from '../pdk/exchange';
import { requestHost } from '../pdk/lua/host-request';
import { responseHost } from '../pdk/lua/host-response';
import type { LuaValue } from '../pdk/lua/marshal';

/**
 * The `kong` object a kong-pdk plugin's phase method gets: `kong.request.getHeader(…)` is the PDK's
 * `kong.request.get_header`, every call answering a promise as kong-pdk's do. The namespaces plugins use (request,
 * response, client, service.request, service.response, log, ctx) are classes made once per process, their methods
 * the PDK's functions under both their kong-pdk (camelCase) and Lua (snake_case) names: a request's `kong` object
 * is a few small instances bound to its exchange. Any other name resolves on use, as a path whose last part names the
 * function (`kong.a.b.someCall` is `a_b_some_call`), and a call of a function outside the subset is refused with
 * `unsupported function: kong.<path>`.
 */

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The PDK's host functions, made once; each call is bound to its exchange for its (synchronous) duration. */
class BoundHost {
  private current: PdkExchange | null = null;
  private readonly host = { ...requestHost(() => this.exchange()), ...responseHost(() => this.exchange()) };

  private exchange(): PdkExchange {
    if (this.current === null) throw new Error('the PDK is only available while a request is handled');
    return this.current;
  }

  names(): string[] {
    return Object.keys(this.host);
  }

  has(name: string): boolean {
    return this.host[name] !== undefined;
  }

  call(ex: PdkExchange, name: string, args: unknown[]): unknown {
    const previous = this.current;
    this.current = ex;
    try {
      return this.host[name]!(...(args as LuaValue[]));
    } finally {
      this.current = previous;
    }
  }
}

const boundHost = new BoundHost();

const ignore = () => undefined;

/**
 * A refused call's promise. It is marked handled, so a plugin that calls without awaiting does not end the process
 * with an unhandled rejection; a caller that awaits it still gets the error.
 */
function refused(err: unknown): Promise<never> {
  const answer = Promise.reject(err);
  answer.catch(ignore);
  return answer;
}

/** Calls the PDK function `name` for the exchange; `path` names it in the refusal of a function outside the subset. */
function callHost(ex: PdkExchange, name: string, path: string, args: unknown[]): Promise<unknown> {
  if (!boundHost.has(name)) return refused(new Error(`unsupported function: kong.${path}`));
  // the body is read when asked for (the calls are promises), so other requests keep streaming theirs
  if ((name === 'request_get_raw_body' || name === 'request_get_body') && ex.requestBody === null && ex.phase !== 'log') {
    const answer = ex.ctx.req.readBody().then((body) => {
      ex.requestBody = body;
      return boundHost.call(ex, name, args);
    });
    answer.catch(ignore);
    return answer;
  }
  try {
    return Promise.resolve(boundHost.call(ex, name, args));
  } catch (err) {
    return refused(err);
  }
}

const BINDING = Symbol('kong-pdk exchange');

/** One request's `kong` object: its exchange, `kong.ctx.shared`, and the namespace instances made so far. */
interface Binding {
  ex: PdkExchange;
  shared: Map<string, unknown> | null;
  nodes: Array<object | undefined>;
}

interface BoundNode {
  readonly [BINDING]: Binding;
}

/** A name no namespace class has: a path resolved on use, callable (a PDK function) and indexable (a deeper path). */
function pathNode(binding: Binding, path: readonly string[]): unknown {
  return new Proxy(() => undefined, {
    get: (_, key) => (typeof key !== 'string' || key === 'then' ? undefined : pathNode(binding, [...path, key])),
    apply: (_, __, args: unknown[]) => callHost(binding.ex, [...path.slice(0, -1), snake(path[path.length - 1]!)].join('_'), path.join('.'), args),
  });
}

/** The end of a namespace class's prototype chain: a name the class does not have becomes a path (see `pathNode`). */
function unknownNames(path: readonly string[], fallback?: (binding: Binding, key: string) => unknown): object {
  return new Proxy(Object.create(null) as object, {
    get: (_, key, receiver: BoundNode) => {
      if (typeof key !== 'string' || key === 'then') return undefined;
      return fallback !== undefined ? fallback(receiver[BINDING], key) : pathNode(receiver[BINDING], [...path, key]);
    },
  });
}

interface Namespace {
  /** the namespace's place in its request's `nodes` */
  id: number;
  proto: object;
}

let namespaces = 0;

/** A namespace class: its functions, its child namespaces as getters (one instance a request), other names as paths. */
function namespace(path: readonly string[], functions: readonly string[], children: Record<string, Namespace> = {}, fallback?: (binding: Binding, key: string) => unknown): Namespace {
  const proto = Object.create(unknownNames(path, fallback)) as Record<string, unknown>;
  const prefix = path.length === 0 ? '' : `${path.join('_')}_`;
  for (const name of functions) {
    const local = name.slice(prefix.length);
    const shown = `${path.join('.')}.${camel(local)}`;
    proto[camel(local)] = proto[local] = function (this: BoundNode, ...args: unknown[]) {
      return callHost(this[BINDING].ex, name, shown, args);
    };
  }
  for (const [key, child] of Object.entries(children)) {
    Object.defineProperty(proto, key, {
      get(this: BoundNode) {
        const binding = this[BINDING];
        return (binding.nodes[child.id] ??= { __proto__: child.proto, [BINDING]: binding });
      },
    });
  }
  return { id: namespaces++, proto };
}

/** the PDK functions of a namespace: those named after it and no deeper namespace */
function functionsOf(prefix: string, deeper: readonly string[] = []): string[] {
  return boundHost.names().filter((name) => name.startsWith(`${prefix}_`) && !deeper.some((d) => name.startsWith(`${d}_`)));
}

/** `kong.log.<level>(…)`: every name under `kong.log` is a level */
const logLevel = (binding: Binding, level: string) => (...parts: unknown[]) => callHost(binding.ex, 'log', `log.${level}`, [level, parts.map(String).join(' ')]);

const ctx = namespace(['ctx'], []);
Object.defineProperty(ctx.proto, 'shared', {
  get(this: BoundNode) {
    const binding = this[BINDING];
    return (binding.shared ??= new Map());
  },
});

const root = namespace([], [], {
  request: namespace(['request'], functionsOf('request')),
  response: namespace(['response'], functionsOf('response')),
  client: namespace(['client'], functionsOf('client')),
  service: namespace(['service'], functionsOf('service', ['service_request', 'service_response']), {
    request: namespace(['service', 'request'], functionsOf('service_request')),
    response: namespace(['service', 'response'], functionsOf('service_response')),
  }),
  log: namespace(['log'], [], {}, logLevel),
  ctx,
});

/** The `kong` object one phase of one request sees. */
export function kongFor(ex: PdkExchange): unknown {
  const binding: Binding = { ex, shared: null, nodes: [] };
  return { __proto__: root.proto, [BINDING]: binding };
}
