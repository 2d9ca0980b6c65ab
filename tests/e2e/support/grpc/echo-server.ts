import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** A gRPC test service over `echo.proto`: each streaming mode, a failing call with trailers, and a slow call. */

export interface Note {
  text?: string;
  count?: number;
  delay_ms?: number;
  server?: string;
  consumer?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const definition = protoLoader.loadSync(join(here, 'echo.proto'), { keepCase: true, defaults: true });
const testPackage = (grpc.loadPackageDefinition(definition).gatehouse as grpc.GrpcObject).test as grpc.GrpcObject;
export const EchoClient = testPackage.Echo as grpc.ServiceClientConstructor;

/** A method of a generated client, by name (the generated client's methods are not typed). */
function method(client: grpc.Client, name: string): (...args: unknown[]) => unknown {
  const fn: unknown = Reflect.get(client, name);
  if (typeof fn !== 'function') throw new Error(`no method ${name}`);
  return (...args) => Reflect.apply(fn, client, args) as unknown;
}

export interface GrpcEchoServer {
  port: number;
  /** calls the server saw cancelled by the caller */
  cancelled: number;
  close(): Promise<void>;
}

const consumerOf = (metadata: grpc.Metadata) => String(metadata.get('x-consumer-username')[0] ?? '');

/** Starts the echo service on a free port of 127.0.0.1 (plain HTTP/2); `name` is put in every reply's `server`. */
export async function startGrpcEcho(name: string): Promise<GrpcEchoServer> {
  const server = new grpc.Server();
  const state = { cancelled: 0 };
  server.addService(EchoClient.service, {
    Unary: (call: grpc.ServerUnaryCall<Note, Note>, callback: grpc.sendUnaryData<Note>) => {
      const delay = call.request.delay_ms ?? 0;
      call.on('cancelled', () => state.cancelled++);
      const reply = () => callback(null, { text: call.request.text, server: name, consumer: consumerOf(call.metadata) });
      if (delay > 0) setTimeout(reply, delay);
      else reply();
    },
    ServerStream: (call: grpc.ServerWritableStream<Note, Note>) => {
      for (let i = 0; i < (call.request.count ?? 0); i++) call.write({ text: `${call.request.text}-${i}`, count: i, server: name });
      call.end();
    },
    ClientStream: (call: grpc.ServerReadableStream<Note, Note>, callback: grpc.sendUnaryData<Note>) => {
      const texts: string[] = [];
      call.on('data', (note: Note) => texts.push(note.text ?? ''));
      call.on('end', () => callback(null, { text: texts.join(','), count: texts.length, server: name }));
    },
    Bidi: (call: grpc.ServerDuplexStream<Note, Note>) => {
      call.on('data', (note: Note) => call.write({ text: `echo:${note.text}`, server: name }));
      call.on('end', () => call.end());
    },
    Fail: (call: grpc.ServerUnaryCall<Note, Note>, callback: grpc.sendUnaryData<Note>) => {
      const trailers = new grpc.Metadata();
      trailers.set('x-failure-detail', `no ${call.request.text}`);
      callback({ code: grpc.status.NOT_FOUND, details: `${call.request.text} not found`, metadata: trailers });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return {
    port,
    get cancelled() {
      return state.cancelled;
    },
    close: async () => server.forceShutdown(),
  };
}

export interface EchoCaller {
  unary(note: Note, metadata?: Record<string, string>, deadlineMs?: number): Promise<Note>;
  serverStream(note: Note): Promise<Note[]>;
  clientStream(notes: Note[]): Promise<Note>;
  bidi(notes: Note[]): Promise<Note[]>;
  /** the failing call's error: code, details and trailers */
  fail(note: Note): Promise<grpc.ServiceError>;
  close(): void;
}

/** A client of the echo service at `address` (`host:port`), in clear text or over TLS trusting `rootCert`. */
export function echoCaller(address: string, tls?: { rootCert: Buffer; serverName: string }): EchoCaller {
  const credentials = tls
    ? grpc.credentials.createSsl(tls.rootCert, null, null, { checkServerIdentity: () => undefined })
    : grpc.credentials.createInsecure();
  const options = tls ? { 'grpc.ssl_target_name_override': tls.serverName, 'grpc.default_authority': tls.serverName } : {};
  const client = new EchoClient(address, credentials, options);
  const calls = { Unary: method(client, 'Unary'), ServerStream: method(client, 'ServerStream'), ClientStream: method(client, 'ClientStream'), Bidi: method(client, 'Bidi'), Fail: method(client, 'Fail') };
  const metadataOf = (headers: Record<string, string> = {}) => {
    const metadata = new grpc.Metadata();
    for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
    return metadata;
  };
  const collect = (stream: grpc.ClientReadableStream<Note>) =>
    new Promise<Note[]>((resolve, reject) => {
      const notes: Note[] = [];
      stream.on('data', (note: Note) => notes.push(note));
      stream.on('error', reject);
      stream.on('end', () => resolve(notes));
    });
  return {
    unary: (note, metadata, deadlineMs) =>
      new Promise((resolve, reject) => {
        const options = deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
        calls.Unary(note, metadataOf(metadata), options, (err: grpc.ServiceError | null, reply: Note) => (err ? reject(err) : resolve(reply)));
      }),
    serverStream: (note) => collect(calls.ServerStream(note) as grpc.ClientReadableStream<Note>),
    clientStream: (notes) =>
      new Promise((resolve, reject) => {
        const stream = calls.ClientStream((err: grpc.ServiceError | null, reply: Note) => (err ? reject(err) : resolve(reply))) as grpc.ClientWritableStream<Note>;
        for (const note of notes) stream.write(note);
        stream.end();
      }),
    bidi: (notes) => {
      const stream = calls.Bidi() as grpc.ClientDuplexStream<Note, Note>;
      const replies = collect(stream);
      for (const note of notes) stream.write(note);
      stream.end();
      return replies;
    },
    fail: (note) =>
      new Promise((resolve, reject) => {
        calls.Fail(note, (err: grpc.ServiceError | null) => (err ? resolve(err) : reject(new Error('the call succeeded'))));
      }),
    close: () => client.close(),
  };
}
