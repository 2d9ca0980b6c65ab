// The hardening issue's data-plane findings, in both topologies, through real processes: path normalisation against
// an upstream that serves files by path (a bypass would show as content), client header scrubbing, buffered-body
// limits (413 without buffering), 431, and linear-time route regexes (kong-reference decisions 12, 13, 15, 17).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rawRequest, startEchoUpstream, startFileUpstream, type EchoUpstream, type FileUpstream, type RawResponse } from '@gatehouse/testkit';
import { cleanUp } from './support/helpers';
import { adminClient, startTopology, TOPOLOGIES, type Topology } from './support/topology';

const SECRET = 'the private file';
const PUBLIC = 'the public file';
const CATCH_ALL = 'the catch-all index';

/** Every form of the issue that must land on the private route (403 without a key, the secret with one). */
const TO_PRIVATE = [
  '/app/public/../private/secret',
  '/app/public/%2e%2e/private/secret',
  '/app/public/.%2e/private/secret',
  '/app/public/%2E%2E/private/secret',
  '//app/private/secret',
  '/app//private/secret',
  '/./app/private/secret',
  '/app/%70rivate/secret',
];
/** Forms that hide a dot segment behind an encoded separator: refused with 400 before any route. */
const REFUSED = ['/app/public/..%2fprivate/secret', '/app/public/..%2Fprivate/secret', '/app/public/..%5cprivate/secret', '/app/public/..;/private/secret', '/../app/private/secret'];

describe.each(TOPOLOGIES)('data plane hardening (%s)', (name) => {
  let topology: Topology;
  let files: FileUpstream;
  let echo: EchoUpstream;
  let admin: ReturnType<typeof adminClient>;

  const portOf = (url: string) => Number(new URL(url).port);
  /**
   * The same raw request on every data plane; their statuses must agree. Returns the first data plane's answer; the
   * others' are checked by `each` when given (echoed headers differ per data plane: x-forwarded-port).
   */
  async function onEveryDataPlane(head: (host: string) => string, options: { bodyBytes?: number } = {}, each?: (answer: RawResponse) => void): Promise<RawResponse> {
    const answers: RawResponse[] = [];
    for (const dp of topology.dataPlanes) answers.push(await rawRequest(portOf(dp.proxyUrl), { head: head('gw.test'), ...options }));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => answers[0]!.status));
    if (each) answers.forEach(each);
    else for (const answer of answers.slice(1)) expect(answer.body).toBe(answers[0]!.body);
    return answers[0]!;
  }
  const get = (path: string, headers: string[] = [], each?: (answer: RawResponse) => void) =>
    onEveryDataPlane((host) => [`GET ${path} HTTP/1.1`, `host: ${host}`, 'connection: close', ...headers].join('\r\n'), {}, each);

  async function created(path: string, form: Record<string, string | string[]>): Promise<any> {
    const res = await admin.post(path, form);
    if (res.status !== 201) throw new Error(`POST ${path} ${JSON.stringify(form)} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  beforeAll(async () => {
    files = await startFileUpstream({ '/app/private/secret': SECRET, '/app/public/file': PUBLIC, '/': CATCH_ALL });
    echo = await startEchoUpstream();
    topology = await startTopology(name, { env: { GATEHOUSE_MAX_BUFFERED_BODY: '64k' } });
    admin = adminClient(topology.adminUrl);
    await created('/services', { name: 'files', url: files.url });
    await created('/services/files/routes', { name: 'public', 'paths[]': '/app/public', strip_path: 'false' });
    await created('/services/files/routes', { name: 'private', 'paths[]': '/app/private', strip_path: 'false' });
    await created('/services/files/routes', { name: 'catch-all', 'paths[]': '/', strip_path: 'false' });
    await created('/routes/private/plugins', { name: 'key-auth' });
    await created('/consumers', { username: 'alice' });
    await created('/consumers/alice/key-auth', { key: 'alice-key' });
    await created('/services', { name: 'echo', url: echo.url });
    await created('/services/echo/routes', { name: 'echo', 'paths[]': '/echo' });
    await created('/services/echo/routes', { name: 'body-key', 'paths[]': '/body-key' });
    await created('/routes/body-key/plugins', { name: 'key-auth', 'config.key_in_body': 'true' });
    await created('/services/echo/routes', { name: 'redos', 'paths[]': '~/redos/(a+)+$' });
    await topology.converge();
  });

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => files?.close(),
      () => echo?.close(),
    );
  });

  describe('path normalisation', () => {
    it('the public file is open, the private one needs a key, the catch-all serves the index', async () => {
      expect(await get('/app/public/file')).toMatchObject({ status: 200, body: PUBLIC });
      expect(await get('/app/private/secret')).toMatchObject({ status: 403 });
      expect(await get('/app/private/secret', ['apikey: alice-key'])).toMatchObject({ status: 200, body: SECRET });
      expect(await get('/')).toMatchObject({ status: 200, body: CATCH_ALL });
    });

    it.each(TO_PRIVATE)('%s matches the private route: 403 without a key, never the content', async (path) => {
      const res = await get(path);
      expect([res.status, JSON.parse(res.body)]).toEqual([403, { message: 'No API key found in headers or querystring' }]);
    });

    it.each(TO_PRIVATE)('%s with a key reaches the upstream as /app/private/secret', async (path) => {
      const before = files.received.length;
      expect(await get(path, ['apikey: alice-key'])).toMatchObject({ status: 200, body: SECRET });
      expect(new Set(files.received.slice(before).map((r) => r.url))).toEqual(new Set(['/app/private/secret']));
    });

    it.each(REFUSED)('%s answers 400 and reaches no upstream', async (path) => {
      const before = files.received.length;
      const res = await get(path);
      expect([res.status, JSON.parse(res.body)]).toEqual([400, { message: 'Bad request' }]);
      expect(files.received.length).toBe(before);
    });
  });

  describe('client headers', () => {
    it('underscore and identity headers never reach the upstream, on a route without plugins', async () => {
      const forged = [
        'x_consumer_username: mallory',
        'x-consumer-username: mallory',
        'x-consumer-id: forged',
        'x-consumer-groups: admins',
        'x-credential-identifier: forged',
        'x-anonymous-consumer: false',
        'x-authenticated-scope: admin',
        'x-authenticated-userid: root',
        'x-authenticated-groups: wheel',
        'x-kept: yes',
      ];
      const res = await get('/echo/h', forged, (answer) => {
        const headers = JSON.parse(answer.body).headers as Record<string, string>;
        const reaching = Object.keys(headers).filter((n) => n.includes('_') || n.startsWith('x-consumer') || n.startsWith('x-authenticated') || n === 'x-credential-identifier' || n === 'x-anonymous-consumer');
        expect(reaching).toEqual([]);
        expect(headers['x-kept']).toBe('yes');
      });
      expect(res.status).toBe(200);
    });

    it('a key-auth route sets the real identity over forged ones', async () => {
      const res = await get('/app/private/secret', ['apikey: alice-key', 'x_consumer_username: mallory', 'x-consumer-username: mallory']);
      expect(res).toMatchObject({ status: 200, body: SECRET });
    });
  });

  describe('bodies and headers past the limits', () => {
    it('200 MB to a key_in_body route answers 413 before the body is in, and the upstream never sees it', async () => {
      const before = echo.received.length;
      const size = 200 * 1024 * 1024;
      const res = await onEveryDataPlane((host) => `POST /body-key/x HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${size}`, {
        bodyBytes: size,
      });
      expect([res.status, JSON.parse(res.body)]).toEqual([413, { message: 'Request size limit exceeded' }]);
      expect(res.bodyBytesSent).toBeLessThan(size);
      expect(echo.received.length).toBe(before);
    });

    it('a body under the limit still authenticates', async () => {
      const body = 'apikey=alice-key&x=1';
      const res = await onEveryDataPlane(
        (host) => `POST /body-key/x HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        {},
        (answer) => expect(JSON.parse(answer.body).headers['x-consumer-username']).toBe('alice'),
      );
      expect(res.status).toBe(200);
    });

    it('headers past the size limit answer 431', async () => {
      expect((await get('/echo/h', [`x-big: ${'a'.repeat(20_000)}`])).status).toBe(431);
    });
  });

  describe('route regexes', () => {
    it('~/redos/(a+)+$ is accepted and a hostile path gets its answer (no match)', async () => {
      expect((await get(`/redos/${'a'.repeat(8_000)}!`)).status).toBe(404);
      const benign = await get('/redos/aaa', [], (answer) => expect(JSON.parse(answer.body).headers['x-forwarded-path']).toBe('/redos/aaa'));
      expect(benign.status).toBe(200);
    });

    it.each(['~/(a)\\1', '~/x(?=y)', '~/x(?!y)', '~/(?<=a)b', '~/(?<!a)b'])('%s is refused with 400 naming paths', async (path) => {
      const res = await admin.post('/services/echo/routes', { 'paths[]': path });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 2, name: 'schema violation' });
      expect(JSON.stringify(res.body.fields.paths)).toMatch(/invalid regex/);
    });
  });
});
