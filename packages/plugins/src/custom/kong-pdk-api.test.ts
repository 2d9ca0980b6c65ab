import { describe, expect, it } from '@jest/globals';
import type { PluginContext } from '../contract';
import { newExchange } from '../pdk/exchange';
import { kongFor } from './kong-pdk-api';

interface Recorded {
  upstream: Map<string, string>;
  errors: string[];
}

/** a request with its own upstream headers and logger, and the `kong` object of its access phase */
function request(headers: Record<string, string> = {}): { kong: any; recorded: Recorded } {
  const recorded: Recorded = { upstream: new Map(), errors: [] };
  const ctx = {
    req: { method: 'GET', path: '/things', headers, query: new URLSearchParams(), clientIp: '127.0.0.1', scheme: 'http', readBody: async () => Buffer.from('the body') },
    upstream: { setHeader: (n: string, v: string) => void recorded.upstream.set(n, v), removeHeader: () => undefined, removeQueryArg: () => undefined, setBody: () => undefined },
    route: null, service: null, consumer: null, credential: null, anonymous: false, index: undefined, runtime: {},
  } as unknown as PluginContext;
  const ex = newExchange(ctx, 'access', 'js-test', { error: (message) => void recorded.errors.push(message) });
  return { kong: kongFor(ex), recorded };
}

describe("kong-pdk's kong object", () => {
  it('answers every PDK call with a promise, under its camelCase and its snake_case name', async () => {
    const { kong, recorded } = request({ host: 'example.test' });
    const answer = kong.request.getHeader('host');
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toBe('example.test');
    expect(await kong.request.get_path()).toBe('/things');
    await kong.service.request.setHeader('x-camel', '1');
    await kong.service.request.set_header('x-snake', '2');
    expect([...recorded.upstream]).toEqual([['x-camel', '1'], ['x-snake', '2']]);
  });

  it('reads the request body when a body getter asks for it', async () => {
    const { kong } = request();
    expect(await kong.request.getRawBody()).toBe('the body');
  });

  it('refuses a function outside the subset with its whole name, at any depth', async () => {
    const { kong } = request();
    await expect(kong.request.getForwardedHost()).rejects.toThrow('unsupported function: kong.request.getForwardedHost');
    await expect(kong.nginx.getSubsystem()).rejects.toThrow('unsupported function: kong.nginx.getSubsystem');
    await expect(kong.service.setTarget('a', 80)).rejects.toThrow('unsupported function: kong.service.setTarget');
  });

  it('resolves a PDK function outside the namespace classes by its path', async () => {
    const { kong } = request();
    expect(typeof (await kong.ngx.time())).toBe('number');
  });

  it('logs at the level its name gives', async () => {
    const { kong, recorded } = request();
    await kong.log.err('went', 'wrong');
    await kong.log.debug('not written');
    expect(recorded.errors).toEqual(['[js-test] went wrong']);
  });

  it('shares kong.ctx.shared within a request, not between requests', () => {
    const first = request().kong;
    const second = request().kong;
    first.ctx.shared.set('k', 1);
    expect(first.ctx.shared.get('k')).toBe(1);
    expect(second.ctx.shared.get('k')).toBeUndefined();
  });

  it("binds each request's calls to its own exchange, when the requests' calls interleave", async () => {
    const a = request({ host: 'a.test' });
    const b = request({ host: 'b.test' });
    const pending = [a.kong.service.request.setHeader('x-from', 'a'), b.kong.service.request.setHeader('x-from', 'b'), a.kong.request.getHeader('host'), b.kong.request.getHeader('host')];
    const [, , hostA, hostB] = await Promise.all(pending);
    expect([hostA, hostB]).toEqual(['a.test', 'b.test']);
    expect(a.recorded.upstream.get('x-from')).toBe('a');
    expect(b.recorded.upstream.get('x-from')).toBe('b');
  });

  it('is not a thenable: awaiting a namespace gives the namespace', async () => {
    const { kong } = request();
    expect(kong.request.then).toBeUndefined();
    expect(await kong.request).toBe(kong.request);
  });

  it('leaves no unhandled rejection behind a call nobody awaits, and still rejects for a caller that does', async () => {
    const { kong } = request();
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const notAwaited = kong.request.getForwardedHost();
      // unhandled rejections are reported once the microtasks of a turn have run: one macrotask later
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      await expect(notAwaited).rejects.toThrow('unsupported function: kong.request.getForwardedHost');
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});
