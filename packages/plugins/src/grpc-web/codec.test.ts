import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from '@jest/globals';
import { frame, trailerFrame } from '../shared/grpc/frames';
import { DecodeRefusal, GrpcWebCodec } from './codec';

const HELLO = join(process.cwd(), 'tests/e2e/support/grpc/hello.proto');
const REPLY = Buffer.from([0x0a, 0x02, 0x68, 0x69]); // HelloResponse{reply: "hi"}

function codec(type: string, path = '/hello.HelloService/SayHello', proto: string | null = HELLO): GrpcWebCodec {
  const made = GrpcWebCodec.create(type, path, proto);
  if (typeof made === 'string') throw new Error(made);
  return made;
}

/** the client's body for upstream chunks, split anywhere, and trailers */
async function downstream(c: GrpcWebCodec, chunks: Buffer[], trailers: Record<string, string>): Promise<Buffer> {
  let taken = false;
  const out = await buffer(Readable.from(chunks).pipe(c.downstream({ take: () => ((taken = true), trailers) })));
  return taken ? out : Buffer.concat([out, Buffer.from('<trailers kept>')]);
}

describe('grpc-web codec', () => {
  it('reassembles frames split across chunks and ends with the trailer frame', async () => {
    const upstream = Buffer.concat([frame(0, REPLY), frame(0, REPLY)]);
    const out = await downstream(codec('application/grpc-web+proto'), [upstream.subarray(0, 3), upstream.subarray(3, 12), upstream.subarray(12)], { 'grpc-status': '0' });
    expect(out).toEqual(Buffer.concat([upstream, trailerFrame('0', '')]));
  });

  it('base64-encodes each frame on its own for -text', async () => {
    const out = await downstream(codec('application/grpc-web-text'), [frame(0, REPLY)], { 'grpc-status': '3', 'grpc-message': 'bad' });
    expect(out.toString('latin1')).toBe(frame(0, REPLY).toString('base64') + trailerFrame('3', 'bad').toString('base64'));
  });

  it('turns messages into JSON for +json and application/json (bare, and without trailer frame)', async () => {
    expect(await downstream(codec('application/grpc-web+json'), [frame(0, REPLY)], {})).toEqual(Buffer.concat([frame(0, Buffer.from('{"reply":"hi"}')), trailerFrame('0', '')]));
    expect((await downstream(codec('application/json'), [frame(0, REPLY)], {})).toString()).toBe('{"reply":"hi"}<trailers kept>');
  });

  it('decodes the request: base64, JSON into protobuf', () => {
    expect(codec('application/grpc-web-text').upstream(Buffer.from(frame(0, REPLY).toString('base64')))).toEqual(frame(0, REPLY));
    expect(codec('application/json').upstream(Buffer.from('{"greeting":"hi","count":"2"}'))).toEqual(frame(0, Buffer.from([0x0a, 0x02, 0x68, 0x69, 0x10, 0x02])));
    expect(() => codec('application/json').upstream(Buffer.from('{"greeting":5}'))).toThrow(new DecodeRefusal('failed to encode payload'));
  });

  it("answers Kong's messages when it cannot transcode", () => {
    expect(GrpcWebCodec.create('application/grpc-web+json', '/x', null)).toBe('transcoding requests require a .proto file defining the service');
    expect(GrpcWebCodec.create('application/grpc-web+json', '/hello.HelloService/Nope', HELLO)).toBe('Unknown path "/hello.HelloService/Nope"');
  });
});
