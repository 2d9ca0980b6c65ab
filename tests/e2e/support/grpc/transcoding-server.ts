import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** The gRPC server behind the grpc-web and grpc-gateway tests: `hello.proto`'s and `shelf.proto`'s services. */

const here = dirname(fileURLToPath(import.meta.url));
export const HELLO_PROTO = join(here, 'hello.proto');
export const SHELF_PROTO = join(here, 'shelf.proto');

type Message = Record<string, unknown>;
type Unary = (call: grpc.ServerUnaryCall<Message, Message>, callback: grpc.sendUnaryData<Message>) => void;
type Streamed = (call: grpc.ServerWritableStream<Message, Message>) => void;

const options = { keepCase: true, longs: Number, enums: String, defaults: true, includeDirs: [join(here, 'stub')] };

function service(file: string, name: string): grpc.ServiceDefinition {
  const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(file, options));
  let at: unknown = loaded;
  for (const part of name.split('.')) at = (at as Record<string, unknown>)[part];
  return (at as grpc.ServiceClientConstructor).service;
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');
const seconds = (value: unknown) => Number((value as { seconds?: unknown } | null)?.seconds ?? 0);

/** `Held` streams: the first message at once, the second once the test releases them */
const held = { waiting: [] as Array<() => void> };

const hello: Record<string, Unary | Streamed> = {
  Held: ((call) => {
    call.write({ reply: `first ${text(call.request.greeting)}` });
    held.waiting.push(() => {
      call.write({ reply: `second ${text(call.request.greeting)}` });
      call.end();
    });
  }) as Streamed,
  SayHello: ((call, callback) => callback(null, { reply: `hello ${text(call.request.greeting)}` })) as Unary,
  LotsOfReplies: ((call) => {
    for (let i = 0; i < Number(call.request.count ?? 0); i++) call.write({ reply: `hello ${text(call.request.greeting)} #${i}` });
    call.end();
  }) as Streamed,
  Refuse: ((call, callback) => callback({ code: grpc.status.PERMISSION_DENIED, details: `not to ${text(call.request.greeting)}` })) as Unary,
};

// `Unknown` is left out: the server answers it UNIMPLEMENTED
const shelf: Record<string, Unary | Streamed> = {
  SayHello: ((call, callback) => callback(null, { reply: `hello ${text(call.request.greeting)}`, boolean_test: call.request.boolean_test })) as Unary,
  Find: ((call, callback) => callback({ code: grpc.status.NOT_FOUND, details: `${text(call.request.greeting)} not found` })) as Unary,
  Bounce: ((call, callback) => {
    const { message, when, now } = call.request;
    callback(null, { reply: `hello ${text(message)}`, time_message: `${seconds(now) - seconds(when)}s apart`, now });
  }) as Unary,
  GrowTail: ((call, callback) => {
    const tail = (call.request.tail ?? { count: 0, endings: '' }) as { count: number; endings: string };
    callback(null, { ...call.request, tail: { ...tail, count: tail.count + 1 } });
  }) as Unary,
  Echo: ((call, callback) => callback(null, call.request)) as Unary,
  Rename: ((call, callback) => callback(null, call.request)) as Unary,
  Count: ((call) => {
    for (let i = 1; i <= Number(call.request.count ?? 0); i++) call.write({ reply: `${text(call.request.greeting)} ${i}` });
    call.end();
  }) as Streamed,
};

export interface TranscodingServer {
  port: number;
  /** `Held` calls waiting for their second message */
  readonly held: number;
  /** sends the waiting `Held` calls their second message and ends them */
  release(): void;
  close(): Promise<void>;
}

/** Starts both services on a free port of 127.0.0.1 (plain HTTP/2). */
export async function startTranscodingServer(): Promise<TranscodingServer> {
  const server = new grpc.Server();
  server.addService(service(HELLO_PROTO, 'hello.HelloService'), hello as grpc.UntypedServiceImplementation);
  server.addService(service(SHELF_PROTO, 'gatehouse.shelf.Shelf'), shelf as grpc.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return {
    port,
    get held() {
      return held.waiting.length;
    },
    release: () => held.waiting.splice(0).forEach((send) => send()),
    close: async () => server.forceShutdown(),
  };
}
