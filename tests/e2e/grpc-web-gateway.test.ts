// Kong's grpc-web and grpc-gateway plugins (spec/03-plugins/32-grpc-web, 28-grpc-gateway) in both topologies: plain
// HTTP/1.1 clients (fetch, undici) on http/https routes whose service is a real @grpc/grpc-js server, unary and
// server-streaming calls, every gRPC-Web content type, REST bindings from google.api.http options, and the schemas.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { connect as http2Connect } from 'node:http2';
import { Agent, fetch as undiciFetch } from 'undici';
import { cleanUp } from './support/helpers';
import { createdThrough, jsonAdmin, startTopology, TOPOLOGIES, type Topology } from './support/topology';
import { HELLO_PROTO, SHELF_PROTO, startTranscodingServer, type TranscodingServer } from './support/grpc/transcoding-server';

/** A gRPC message frame, or gRPC-Web's trailer frame (0x80) */
function frame(payload: Buffer | string, type = 0): Buffer {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}
/** grpc-js ends a successful call with `grpc-message: OK`; the message is relayed as the upstream wrote it */
const trailer = (status: number, message = status === 0 ? 'OK' : '') => frame(`grpc-status:${status}\r\ngrpc-message:${message}\r\n`, 0x80);
/** protobuf bytes of hello.HelloRequest / HelloResponse: field 1 (a string) and field 2 (an int32) */
const helloMessage = (text: string, count?: number) =>
  Buffer.concat([Buffer.from([0x0a, Buffer.byteLength(text)]), Buffer.from(text), count === undefined ? Buffer.alloc(0) : Buffer.from([0x10, count])]);

// Kong's own test vectors (32-grpc-web/01-proxy_spec.lua): SayHello{greeting: "heya"} → {reply: "hello heya"}, each
// frame base64-encoded on its own; the trailer frame carries grpc-js's `grpc-message: OK` where Kong's Go server sends none
const HELLO_REQUEST_TEXT_BODY = 'AAAAAAYKBGhleWE=';
const HELLO_RESPONSE_TEXT_BODY = 'AAAAAAwKCmhlbGxvIGhleWE=' + trailer(0).toString('base64');

describe.each(TOPOLOGIES)('grpc-web and grpc-gateway (%s)', (name) => {
  let topology: Topology;
  let server: TranscodingServer;
  const tlsAgent = new Agent({ connect: { rejectUnauthorized: false } });
  const url = (path: string, i = 0) => `${topology.dataPlanes[i]!.proxyUrl}${path}`;
  const post = async (path: string, type: string, body: Buffer | string, i = 0) => {
    const res = await fetch(url(path, i), { method: 'POST', headers: { 'content-type': type }, body });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  };
  const rest = async (method: string, path: string, body?: string) => {
    const res = await fetch(url(path), { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  beforeAll(async () => {
    server = await startTranscodingServer();
    topology = await startTopology(name);
    const admin = (path: string, body: unknown) => createdThrough(topology.adminUrl, path, body);
    await admin('/services', { name: 'grpc', protocol: 'grpc', host: '127.0.0.1', port: server.port });
    await admin('/services/grpc/routes', { name: 'web', protocols: ['http', 'https'], paths: ['/hello.HelloService'] });
    await admin('/routes/web/plugins', { name: 'grpc-web', config: { proto: HELLO_PROTO } });
    await admin('/services/grpc/routes', { name: 'stripped', protocols: ['http', 'https'], paths: ['/prefix'] });
    await admin('/routes/stripped/plugins', { name: 'grpc-web', config: { proto: HELLO_PROTO, pass_stripped_path: true, allow_origin_header: 'https://app.example.org' } });
    await admin('/services/grpc/routes', { name: 'no-proto', protocols: ['http'], paths: ['/no-proto'] });
    await admin('/routes/no-proto/plugins', { name: 'grpc-web', config: { pass_stripped_path: true } });
    await admin('/services/grpc/routes', { name: 'rest', protocols: ['http', 'https'], paths: ['/v1', '/bounce'], strip_path: false });
    await admin('/routes/rest/plugins', { name: 'grpc-gateway', config: { proto: SHELF_PROTO } });
    await topology.converge();
  }, 240_000);

  afterAll(async () => {
    await cleanUp(
      () => topology?.stop(),
      () => server?.close(),
      () => tlsAgent.close(),
    );
  });

  describe('grpc-web', () => {
    it("answers Kong's base64 test vector (application/grpc-web-text) on every data plane", async () => {
      for (let i = 0; i < topology.dataPlanes.length; i++) {
        const res = await post('/hello.HelloService/SayHello', 'application/grpc-web-text', HELLO_REQUEST_TEXT_BODY, i);
        expect([res.status, res.headers.get('content-type'), res.headers.get('access-control-allow-origin')]).toEqual([200, 'application/grpc-web-text', '*']);
        expect(res.body.toString('latin1')).toBe(HELLO_RESPONSE_TEXT_BODY);
      }
    });

    it('relays binary calls (application/grpc-web and +proto), the trailers as the last frame of the body', async () => {
      for (const type of ['application/grpc-web', 'application/grpc-web+proto']) {
        const res = await post('/hello.HelloService/SayHello', type, frame(helloMessage('heya')));
        expect([res.status, res.headers.get('content-type')]).toEqual([200, type]);
        expect(res.body).toEqual(Buffer.concat([frame(helloMessage('hello heya')), trailer(0)]));
      }
    });

    it('relays calls through the TLS listener', async () => {
      const res = await undiciFetch(`${topology.dataPlanes[0]!.proxyTlsUrl}/hello.HelloService/SayHello`, {
        method: 'POST',
        headers: { 'content-type': 'application/grpc-web-text' },
        body: HELLO_REQUEST_TEXT_BODY,
        dispatcher: tlsAgent,
      });
      expect([res.status, await res.text()]).toEqual([200, HELLO_RESPONSE_TEXT_BODY]);
    });

    it('relays calls from HTTP/2 clients (TLS listener, ALPN h2)', async () => {
      const session = http2Connect(topology.dataPlanes[0]!.proxyTlsUrl, { rejectUnauthorized: false });
      try {
        const stream = session.request({ ':method': 'POST', ':path': '/hello.HelloService/SayHello', 'content-type': 'application/grpc-web-text' });
        stream.end(HELLO_REQUEST_TEXT_BODY);
        const [head] = (await once(stream, 'response')) as [Record<string, string | number>];
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        expect([head[':status'], head['content-type'], Buffer.concat(chunks).toString('latin1')]).toEqual([200, 'application/grpc-web-text', HELLO_RESPONSE_TEXT_BODY]);
      } finally {
        session.close();
      }
    });

    it('streams a server-streaming call: each message a frame, then the trailers (binary, text and JSON)', async () => {
      const replies = [0, 1, 2].map((i) => frame(helloMessage(`hello many #${i}`)));
      const binary = await post('/hello.HelloService/LotsOfReplies', 'application/grpc-web+proto', frame(helloMessage('many', 3)));
      expect([binary.status, binary.body]).toEqual([200, Buffer.concat([...replies, trailer(0)])]);
      const text = await post('/hello.HelloService/LotsOfReplies', 'application/grpc-web-text', frame(helloMessage('many', 3)).toString('base64'));
      const decoded = Buffer.concat((text.body.toString('latin1').match(/[A-Za-z0-9+/]+=*/g) ?? []).map((piece) => Buffer.from(piece, 'base64')));
      expect(decoded).toEqual(Buffer.concat([...replies, trailer(0)]));
      const json = await post('/hello.HelloService/LotsOfReplies', 'application/grpc-web+json', frame(JSON.stringify({ greeting: 'many', count: 2 })));
      expect(json.body).toEqual(Buffer.concat([frame('{"reply":"hello many #0"}'), frame('{"reply":"hello many #1"}'), trailer(0)]));
    });

    it('sends each message of a stream as it comes, before the stream ends', async () => {
      const res = await fetch(url('/hello.HelloService/Held'), { method: 'POST', headers: { 'content-type': 'application/grpc-web+proto' }, body: frame(helloMessage('x')) });
      const reader = res.body!.getReader();
      const first = frame(helloMessage('first x'));
      let got = Buffer.alloc(0);
      while (got.length < first.length) got = Buffer.concat([got, Buffer.from((await reader.read()).value!)]);
      // the upstream still holds the call open: what arrived is its first message
      expect([got, server.held]).toEqual([first, 1]);
      server.release();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) got = Buffer.concat([got, Buffer.from(chunk.value)]);
      expect(got).toEqual(Buffer.concat([first, frame(helloMessage('second x')), trailer(0)]));
    });

    it('transcodes gRPC-Web JSON (framed) and plain JSON with the .proto file', async () => {
      const framed = await post('/hello.HelloService/SayHello', 'application/grpc-web+json', frame(JSON.stringify({ greeting: 'heya' })));
      expect([framed.status, framed.headers.get('content-type'), framed.body]).toEqual([200, 'application/grpc-web+json', Buffer.concat([frame('{"reply":"hello heya"}'), trailer(0)])]);
      const textJson = await post('/hello.HelloService/SayHello', 'application/grpc-web-text+json', frame(JSON.stringify({ greeting: 'heya' })).toString('base64'));
      expect(textJson.body.toString('latin1')).toBe(frame('{"reply":"hello heya"}').toString('base64') + trailer(0).toString('base64'));
      const plain = await post('/hello.HelloService/SayHello', 'application/json', JSON.stringify({ greeting: 'heya' }));
      expect([plain.status, plain.headers.get('content-type'), JSON.parse(plain.body.toString())]).toEqual([200, 'application/json', { reply: 'hello heya' }]);
    });

    it('puts a failed call\'s status and message in the trailer frame', async () => {
      const res = await post('/hello.HelloService/Refuse', 'application/grpc-web+proto', frame(helloMessage('you')));
      expect([res.status, res.body]).toEqual([200, trailer(7, 'not%20to%20you')]);
    });

    it('pass_stripped_path sends the path the route strips; allow_origin_header is the CORS origin', async () => {
      const res = await post('/prefix/hello.HelloService/SayHello', 'application/json', JSON.stringify({ greeting: 'heya' }));
      expect([res.status, JSON.parse(res.body.toString()), res.headers.get('access-control-allow-origin')]).toEqual([200, { reply: 'hello heya' }, 'https://app.example.org']);
    });

    it("answers a CORS preflight as Kong does", async () => {
      const res = await fetch(url('/prefix/hello.HelloService/SayHello'), { method: 'OPTIONS' });
      expect([res.status, await res.text()]).toEqual([200, 'OK']);
      expect([
        res.headers.get('content-type'),
        res.headers.get('access-control-allow-origin'),
        res.headers.get('access-control-allow-methods'),
        res.headers.get('access-control-allow-headers'),
      ]).toEqual(['application/grpc-web-text+proto', 'https://app.example.org', 'POST', 'content-type,x-grpc-web,x-user-agent']);
    });

    it("refuses JSON without a .proto file, and a path the .proto file does not define, with Kong's messages", async () => {
      const noProto = await post('/no-proto/hello.HelloService/SayHello', 'application/json', '{"greeting":"x"}');
      expect([noProto.status, noProto.body.toString()]).toEqual([400, 'transcoding requests require a .proto file defining the service']);
      const unknown = await post('/hello.HelloService/Nope', 'application/json', '{"greeting":"x"}');
      expect([unknown.status, unknown.body.toString()]).toEqual([400, 'Unknown path "/hello.HelloService/Nope"']);
      // binary needs no .proto file
      const binary = await post('/no-proto/hello.HelloService/SayHello', 'application/grpc-web+proto', frame(helloMessage('heya')));
      expect([binary.status, binary.body]).toEqual([200, Buffer.concat([frame(helloMessage('hello heya')), trailer(0)])]);
    });
  });

  describe('grpc-gateway', () => {
    it('maps a GET with a path parameter onto the RPC, and its reply to JSON (proto3 defaults included)', async () => {
      const res = await rest('GET', '/v1/messages/john_doe');
      expect([res.status, res.headers.get('content-type'), res.headers.get('access-control-allow-origin')]).toEqual([200, 'application/json', '*']);
      expect(JSON.parse(res.text)).toEqual({ reply: 'hello john_doe', boolean_test: false });
    });

    it('follows additional_bindings (`**` takes the rest of the path) and ignores query args when the rule has a body', async () => {
      expect(JSON.parse((await rest('GET', '/v1/messages/legacy/john/doe')).text)).toEqual({ reply: 'hello john/doe', boolean_test: false });
      expect(JSON.parse((await rest('GET', '/v1/messages/john_doe?arg1=1&arg2.test=2&boolean_test=true')).text)).toEqual({ reply: 'hello john_doe', boolean_test: false });
    });

    it.each([
      ['true', true],
      ['false', false],
      ['0', false],
      ['1', true],
    ])('reads boolean_test=%s from the query string as %s', async (value, expected) => {
      const res = await rest('GET', `/v1/messages/legacy/john_doe?boolean_test=${value}`);
      expect([res.status, JSON.parse(res.text)]).toEqual([200, { reply: 'hello john_doe', boolean_test: expected }]);
    });

    it('fills nested messages from structured query args', async () => {
      const res = await rest('GET', '/v1/grow/tail?name=lizard&hands.count=0&hands.endings=fingers&legs.count=4&legs.endings=toes&tail.count=0&tail.endings=tip');
      expect([res.status, JSON.parse(res.text)]).toEqual([
        200,
        { name: 'lizard', hands: { count: 0, endings: 'fingers' }, legs: { count: 4, endings: 'toes' }, tail: { count: 1, endings: 'tip' } },
      ]);
    });

    it('reads a JSON body into the message (`body: "*"` and `body: "<field>"`), Timestamps as ISO 8601', async () => {
      const bounced = await rest('POST', '/bounce', JSON.stringify({ message: 'hi', when: '2024-05-01T12:00:00Z', now: '2024-05-01T12:05:15' }));
      expect([bounced.status, JSON.parse(bounced.text)]).toEqual([200, { reply: 'hello hi', time_message: '315s apart', now: '2024-05-01T12:05:15' }]);
      const renamed = await rest('PUT', '/v1/names/bob', JSON.stringify({ count: 2, endings: 'toes' }));
      expect([renamed.status, JSON.parse(renamed.text)]).toEqual([200, { name: 'bob', limb: { count: 2, endings: 'toes' } }]);
    });

    it('keeps empty repeated fields as [] (Kong #10801)', async () => {
      const res = await rest('POST', '/v1/echo', JSON.stringify({ array: [], nullable: 'ahaha' }));
      expect([res.status, JSON.parse(res.text)]).toEqual([200, { array: [], nullable: 'ahaha' }]);
      expect(res.text).toContain('[]');
    });

    it('sends a server stream as one JSON object per message', async () => {
      const res = await rest('GET', '/v1/count/n?count=3');
      expect([res.status, res.text]).toEqual([200, '{"reply":"n 1","boolean_test":false}{"reply":"n 2","boolean_test":false}{"reply":"n 3","boolean_test":false}']);
    });

    it("maps gRPC statuses to Kong's HTTP statuses, the grpc-status header kept", async () => {
      const unimplemented = await rest('GET', '/v1/unknown/john_doe');
      expect([unimplemented.status, unimplemented.headers.get('grpc-status')]).toEqual([500, '12']);
      const missing = await rest('DELETE', '/v1/books/dune');
      expect([missing.status, missing.headers.get('grpc-status'), missing.headers.get('grpc-message')]).toEqual([404, '5', 'dune%20not%20found']);
    });

    it("refuses what it cannot transcode with 400 and Kong's messages", async () => {
      expect(await rest('GET', '/v1/messages/john_doe/bai')).toMatchObject({ status: 400, text: 'failed to transcode .proto file Unknown path "/v1/messages/john_doe/bai"' });
      expect(await rest('PATCH', '/v1/messages/john_doe')).toMatchObject({ status: 400, text: 'failed to transcode .proto file Unknown method "patch"' });
      expect(await rest('POST', '/bounce', '{"message":null}')).toMatchObject({ status: 400, text: 'failed to encode payload' });
      expect(await rest('POST', '/bounce', '{"message":1}')).toMatchObject({ status: 400, text: 'failed to encode payload' });
      const invalid = await rest('POST', '/bounce', '{"message":"invalid}');
      expect([invalid.status, invalid.text.startsWith('decode json err: ')]).toEqual([400, true]);
    });

    it('answers a CORS preflight as Kong does', async () => {
      const res = await fetch(url('/v1/messages/x'), { method: 'OPTIONS' });
      expect([res.status, await res.text(), res.headers.get('content-type'), res.headers.get('access-control-allow-methods'), res.headers.get('access-control-allow-headers')]).toEqual([
        200,
        'OK',
        'application/json',
        'GET,POST,PATCH,DELETE',
        'content-type',
      ]);
    });
  });

  describe('schemas', () => {
    it.each([
      ['grpc-web', { proto: 1 }, 'proto', 'expected a string'],
      ['grpc-web', { pass_stripped_path: 'yes' }, 'pass_stripped_path', 'expected a boolean'],
      ['grpc-web', { allow_origin_header: 5 }, 'allow_origin_header', 'expected a string'],
      ['grpc-web', { origin: '*' }, 'origin', 'unknown field'],
      ['grpc-gateway', { proto: true }, 'proto', 'expected a string'],
      ['grpc-gateway', { protos: 'x' }, 'protos', 'unknown field'],
    ])('%s refuses %j', async (plugin, config, field, message) => {
      const res = await jsonAdmin(topology.adminUrl, 'POST', '/plugins', { name: plugin, config });
      expect([res.status, res.body.fields?.config?.[field]]).toEqual([400, message]);
    });

    it("fills Kong's defaults", async () => {
      const web = await jsonAdmin(topology.adminUrl, 'POST', '/plugins', { name: 'grpc-web' });
      expect([web.status, web.body.config]).toEqual([201, { proto: null, pass_stripped_path: null, allow_origin_header: '*' }]);
      const gateway = await jsonAdmin(topology.adminUrl, 'POST', '/plugins', { name: 'grpc-gateway' });
      expect([gateway.status, gateway.body.config]).toEqual([201, { proto: null }]);
      // global plugins for a moment: the data planes drop them before the next test proxies
      await jsonAdmin(topology.adminUrl, 'DELETE', `/plugins/${web.body.id}`);
      await jsonAdmin(topology.adminUrl, 'DELETE', `/plugins/${gateway.body.id}`);
      await topology.converge();
    });

    it.each(['grpc-web', 'grpc-gateway'])('GET /schemas/plugins/%s describes its config, and GET / lists it', async (plugin) => {
      const res = await jsonAdmin(topology.adminUrl, 'GET', `/schemas/plugins/${plugin}`);
      const config = (res.body.fields as Array<Record<string, { fields: Array<Record<string, unknown>> }>>).find((f) => 'config' in f)!.config;
      expect([res.status, config.fields.map((f) => Object.keys(f)[0])]).toEqual([200, plugin === 'grpc-web' ? ['proto', 'pass_stripped_path', 'allow_origin_header'] : ['proto']]);
      const root = await jsonAdmin(topology.adminUrl, 'GET', '/');
      expect(root.body.plugins.available_on_server[plugin]).toBeDefined();
    });
  });
});
