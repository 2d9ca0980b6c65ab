import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { unframe } from '../shared/grpc/frames';
import { decodeToJson } from '../shared/grpc/json-message';
import { templateRegex } from './bindings';
import { findCall, requestBody, TranscodeRefusal } from './transcode';

const SHELF = join(process.cwd(), 'tests/e2e/support/grpc/shelf.proto');

describe('grpc-gateway path templates', () => {
  it.each([
    ['/v1/messages/{greeting}', '/v1/messages/john', ['john']],
    ['/v1/messages/{greeting}', '/v1/messages/john/doe', null],
    ['/v1/messages/legacy/{greeting=**}', '/v1/messages/legacy/john/doe', ['john/doe']],
    ['/v1/{name=shelves/*}/books', '/v1/shelves/7/books', ['shelves/7']],
    ['/v1/a.b', '/v1/axb', null],
  ])('%s against %s', (template, path, values) => {
    const match = templateRegex(template).regex.exec(path);
    expect(match === null ? null : match.slice(1)).toEqual(values);
  });
});

describe('grpc-gateway request bodies', () => {
  const message = (method: string, path: string, body = '', query = '') => {
    const call = findCall(method, path, SHELF);
    return { rpc: call.binding.rpcPath, message: decodeToJson(call.binding.input, unframe(requestBody(call, Buffer.from(body), new URLSearchParams(query))).messages[0]!) };
  };

  it('takes path values, then query args when the rule has no body', () => {
    expect(message('get', '/v1/grow/tail', '', 'name=lizard&hands.count=2&hands.nails=5&unknown=1')).toEqual({
      rpc: '/gatehouse.shelf.Shelf/GrowTail',
      message: { name: 'lizard', hands: { count: 2, endings: '' } },
    });
  });

  it('maps the JSON body into a field (`body: "limb"`), timestamps from ISO 8601 (UTC without an offset)', () => {
    expect(message('put', '/v1/names/bob', '{"count":"3"}').message).toEqual({ name: 'bob', limb: { count: 3, endings: '' } });
    expect(message('post', '/bounce', '{"when":"2024-05-01T12:00:00+02:00","now":"2024-05-01T12:00:00"}').message).toEqual({ message: '', when: '2024-05-01T10:00:00', now: '2024-05-01T12:00:00' });
  });

  it.each([
    ['get', '/nowhere', '', 'failed to transcode .proto file Unknown path "/nowhere"'],
    ['head', '/v1/messages/x', '', 'failed to transcode .proto file Unknown method "head"'],
    ['post', '/bounce', '7', 'body must be a table'],
    ['post', '/bounce', '{"when":5}', 'failed to encode payload'],
    ['post', '/v1/echo', '{"array":"one"}', 'failed to encode payload'],
  ])("refuses %s %s %s with Kong's message", (method, path, body, error) => {
    expect(() => message(method, path, body)).toThrow(new TranscodeRefusal(error));
  });

  it('needs a .proto file', () => {
    expect(() => findCall('get', '/v1/messages/x', null)).toThrow('transcoding requests require a .proto file defining the service');
  });
});
