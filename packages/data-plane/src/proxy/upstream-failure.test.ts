import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sendUpstreamFailure } from './responses';

/** a lookup's error as Node makes it (`getaddrinfo <code> <host>`) */
function lookupError(code: string): Error {
  return Object.assign(new Error(`getaddrinfo ${code} upstream.test`), { code, syscall: 'getaddrinfo', hostname: 'upstream.test' });
}

describe("the gateway's answer to an upstream failure", () => {
  let failure: Error | 'timeout' | null = null;
  const server = createServer((_req, res: ServerResponse) => sendUpstreamFailure(res, failure, null, null));
  let port = 0;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const answer = (given: Error | 'timeout' | null) =>
    new Promise<[number, unknown]>((resolve, reject) => {
      failure = given;
      request({ port, host: '127.0.0.1' }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve([res.statusCode!, JSON.parse(body)]));
      })
        .on('error', reject)
        .end();
    });

  it.each(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA'])('%s (a name without an address): 503 name resolution failed', async (code) => {
    expect(await answer(lookupError(code))).toEqual([503, { message: 'name resolution failed' }]);
  });

  it('a lookup the resolver did not answer, a refused connection, nothing known: 502', async () => {
    for (const given of [lookupError('EAI_AGAIN'), Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), null]) {
      expect(await answer(given)).toEqual([502, { message: 'An invalid response was received from the upstream server' }]);
    }
  });

  it('a timeout, named or by its code: 504', async () => {
    for (const given of ['timeout' as const, Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' })]) {
      expect(await answer(given)).toEqual([504, { message: 'The upstream server is timing out' }]);
    }
  });
});
