import type { PluginContext, PluginResponse } from '../../contract';
import type { PdkExchange } from '../exchange';
import { requestHost } from './host-request';
import { responseHost } from './host-response';
import { LuaTableRef, type LuaValue } from './marshal';
import { UNTRUSTED_LUA_OFF_MESSAGE, untrustedLua, type UntrustedLuaOptions } from './untrusted-lua';
import { LuaRunError, LuaVm, type LuaChunk } from './vm';

/**
 * The sandbox every Lua feature shares (pre/post-function snippets, custom_fields_by_lua, request-transformer
 * templates): one VM per process, so `kong.ctx.shared` is one table across the plugins of a request. Chunks are
 * compiled once per text; a run sees the exchange `run*` was given, and only during that call.
 */
export class LuaSandbox {
  private readonly vm: LuaVm;
  private current: PdkExchange | null = null;
  /** a snippet that returned a function on its first run (Kong 0.2 style): that function, by chunk */
  private readonly entryPoints = new Map<number, number>();
  private readonly sharedTables = new WeakMap<object, number>();
  private readonly releaser = new FinalizationRegistry<number>((ref) => this.vm.release(ref));

  constructor(readonly options: UntrustedLuaOptions = untrustedLua()) {
    const current = (): PdkExchange => {
      if (this.current === null) throw new Error('the PDK is only available while a request is handled');
      return this.current;
    };
    this.vm = new LuaVm({
      ...requestHost(current),
      ...responseHost(current),
      ctx_shared: () => new LuaTableRef(this.sharedRef(current().ctx)),
      version: () => '3.9.1',
    }, undefined, options);
  }

  /** Compiles `source` (throws `LuaSyntaxError` with Lua's message); the same text compiles once. */
  compile(source: string, chunkName?: string): LuaChunk {
    return this.vm.compile(source, chunkName);
  }

  syntaxError(source: string): string | null {
    return this.vm.syntaxError(source);
  }

  /** With `untrusted_lua = off` no Lua runs (a config stored before the setting changed fails, as in Kong). */
  refuseWhenOff(): void {
    if (this.options.mode === 'off') throw new LuaRunError(UNTRUSTED_LUA_OFF_MESSAGE);
  }

  /** kong.ctx.shared of one request: a Lua table living as long as the request's context. */
  private sharedRef(ctx: PluginContext): number {
    const owner: object = ctx.locals ?? ctx;
    let ref = this.sharedTables.get(owner);
    if (ref === undefined) {
      ref = this.vm.newTable();
      this.sharedTables.set(owner, ref);
      this.releaser.register(owner, ref);
    }
    return ref;
  }

  private within<T>(ex: PdkExchange, run: () => T): T {
    const previous = this.current;
    this.current = ex;
    try {
      return run();
    } finally {
      this.current = previous;
    }
  }

  /**
   * Runs a snippet as Kong's serverless plugins do: the chunk runs; if it returns a function, that function is what
   * runs from then on (now included). Returns the answer that ends the request (an exit, or `ngx.say` output),
   * or null to go on; a Lua error is thrown as a `LuaRunError`.
   */
  runSnippet(chunk: LuaChunk, ex: PdkExchange): PluginResponse | null {
    this.refuseWhenOff();
    return this.within(ex, () => {
      try {
        const entry = this.entryPoints.get(chunk.ref);
        if (entry !== undefined) this.vm.runFunction(entry);
        else {
          const fn = this.vm.runKeepingFunction(chunk);
          if (fn !== null) {
            this.entryPoints.set(chunk.ref, fn);
            this.vm.runFunction(fn);
          }
        }
      } catch (err) {
        if (ex.exit === null) throw err;
      }
      if (ex.exit !== null) return ex.exit;
      return null;
    });
  }

  /** Evaluates a chunk that returns one value (custom_fields_by_lua); nil reads as null. */
  evaluate(chunk: LuaChunk, ex: PdkExchange): LuaValue {
    this.refuseWhenOff();
    return this.within(ex, () => this.vm.run(chunk));
  }

  /**
   * Runs `run` with a request-transformer template environment (headers, query_params, uri_captures, shared) built
   * once for the request; `render` evaluates a compiled template in it.
   */
  withTemplateEnv<T>(ex: PdkExchange, values: { headers: unknown; query: unknown; captures: unknown }, run: (render: (chunk: LuaChunk) => string) => T): T {
    return this.within(ex, () => {
      const env = this.vm.keep('template_env', [values.headers, values.query, values.captures, new LuaTableRef(this.sharedRef(ex.ctx))]);
      try {
        return run((chunk) => {
          const out = this.vm.run(chunk, [new LuaTableRef(env)]);
          if (typeof out !== 'string') throw new LuaRunError('template did not render to a string');
          return out;
        });
      } finally {
        this.vm.release(env);
      }
    });
  }
}

let shared: LuaSandbox | null = null;

/** The process's sandbox, created on first use (its VM starts in a few milliseconds) and again when the settings change. */
export function luaSandbox(): LuaSandbox {
  if (shared === null || shared.options !== untrustedLua()) shared = new LuaSandbox();
  return shared;
}
