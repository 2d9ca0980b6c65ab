import { describe, expect, it } from '@jest/globals';
import type { Consumer } from '@gatehouse/core';
import type { PluginContext, PluginResponse } from '../contract';
import { requestTerminationAccess } from './handler';
import { checkRequestTerminationConfig, requestTerminationConfigSchema } from './schema';

const consumer = { id: '11111111-1111-4111-8111-111111111111', username: 'anon' } as Consumer;

function contextFor(request: { headers?: Record<string, string>; query?: string; body?: string } = {}): PluginContext {
  return {
    req: {
      method: 'POST',
      path: '/things',
      headers: { host: 'gw.test:8000', ...(request.headers ?? {}) },
      query: new URLSearchParams(request.query ?? ''),
      clientIp: '127.0.0.1',
      scheme: 'http',
      readBody: async () => Buffer.from(request.body ?? ''),
    },
    upstream: { setHeader: () => undefined, removeHeader: () => undefined, removeQueryArg: () => undefined, setBody: () => undefined },
    route: null,
    service: null,
    consumer,
    credential: null,
    anonymous: true,
    index: undefined,
    runtime: {},
  };
}

const run = async (config: Record<string, unknown>, request?: Parameters<typeof contextFor>[0]) =>
  (await requestTerminationAccess(contextFor(request), requestTerminationConfigSchema.parse(config))) as PluginResponse | undefined;

describe('request-termination', () => {
  it('answers 503 "Service unavailable" by default', async () => {
    expect(await run({})).toEqual({ status: 503, body: { message: 'Service unavailable' } });
  });

  it("uses Kong's default message per status, and an empty body for other codes", async () => {
    expect((await run({ status_code: 401 }))?.body).toEqual({ message: 'Unauthorized' });
    expect((await run({ status_code: 404 }))?.body).toEqual({ message: 'Not found' });
    expect((await run({ status_code: 405 }))?.body).toEqual({ message: 'Method not allowed' });
    expect((await run({ status_code: 500 }))?.body).toEqual({ message: 'An unexpected error occurred' });
    expect((await run({ status_code: 502 }))?.body).toEqual({ message: 'Bad Gateway' });
    expect(await run({ status_code: 418 })).toEqual({ status: 418, body: null });
  });

  it('sends the configured message, or a raw body with its content type', async () => {
    expect(await run({ status_code: 403, message: 'go away' })).toEqual({ status: 403, body: { message: 'go away' } });
    expect(await run({ status_code: 200, body: '<h1>closed</h1>', content_type: 'text/html' })).toEqual({
      status: 200,
      body: '<h1>closed</h1>',
      headers: { 'content-type': 'text/html' },
    });
  });

  it('with a trigger, answers only when the header or query argument is present', async () => {
    expect(await run({ trigger: 'X-Block' })).toBeUndefined();
    expect((await run({ trigger: 'X-Block' }, { headers: { 'x-block': '1' } }))?.status).toBe(503);
    expect((await run({ trigger: 'block' }, { query: 'block' }))?.status).toBe(503);
  });

  it('echo returns the request, the matched entities and the consumer', async () => {
    const response = await run({ echo: true, status_code: 200 }, { headers: { 'content-type': 'application/json' }, query: 'a=1&a=2', body: '{"x":1}' });
    expect(response?.status).toBe(200);
    expect(response?.body).toMatchObject({
      request: { scheme: 'http', host: 'gw.test', port: 8000, method: 'POST', path: '/things', query: { a: ['1', '2'] }, body: { x: 1 }, raw_body: '{"x":1}' },
      matched_consumer: consumer,
    });
  });

  it('echo has no body key when the body is not JSON or a form, and the default message of its status', async () => {
    const response = (await run({ echo: true, status_code: 404 }, { body: 'cool body' })) as { body: { message: string; request: Record<string, unknown> } };
    expect(response.body.message).toBe('Not found');
    expect(JSON.parse(JSON.stringify(response.body.request))).not.toHaveProperty('body');
    expect(response.body.request.raw_body).toBe('cool body');
    expect(response.body.request.uri_captures).toEqual({ unnamed: [], named: {} });
  });

  it("echo reports the listener's port and the route's uri_captures when the gateway gives them", async () => {
    const ctx = contextFor();
    const req = { ...ctx.req, serverPort: 9000, uriCaptures: { unnamed: ['status'], named: { parameter: 'status' } } };
    const response = (await requestTerminationAccess({ ...ctx, req }, requestTerminationConfigSchema.parse({ echo: true }))) as { body: { request: Record<string, unknown> } };
    expect(response.body.request).toMatchObject({ host: 'gw.test', port: 9000, uri_captures: { unnamed: ['status'], named: { parameter: 'status' } } });
  });

  it("enforces Kong's config rules", () => {
    const check = (config: Record<string, unknown>) => checkRequestTerminationConfig(requestTerminationConfigSchema.parse(config));
    expect(check({ message: 'm', body: 'b' })).toEqual({ '@config': 'message cannot be used with content_type or body' });
    expect(check({ content_type: 'text/plain' })).toEqual({ '@config': 'content_type requires a body' });
    expect(check({ echo: true, body: 'b' })).toEqual({ '@config': 'echo cannot be used with content_type and body' });
    expect(check({ body: 'b', content_type: 'text/plain' })).toBeNull();
    expect(requestTerminationConfigSchema.safeParse({ status_code: 600 }).success).toBe(false);
    expect(requestTerminationConfigSchema.safeParse({ status_code: 99 }).success).toBe(false);
    expect(requestTerminationConfigSchema.safeParse({ trigger: 'bad name' }).success).toBe(false);
  });
});
