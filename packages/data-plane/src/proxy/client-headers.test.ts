import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { isIdentityHeader, scrubClientHeaders } from './client-headers';

/** A request as Node's parser leaves it: rawHeaders, and headers folded from them (repeats joined with ", "). */
function requestWith(raw: string[]): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.rawHeaders = raw;
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    headers[name] = headers[name] === undefined ? raw[i + 1]! : `${headers[name]}, ${raw[i + 1]!}`;
  }
  req.headers = headers;
  return req;
}

describe('scrubClientHeaders', () => {
  it('drops underscore names and identity headers from rawHeaders and headers, whatever their case', () => {
    const req = requestWith([
      'Host', 'gw',
      'X_Consumer_Username', 'mallory',
      'X-Consumer-Username', 'mallory',
      'x-consumer-groups', 'admins',
      'X-Authenticated-Userid', 'root',
      'x-authenticated-scope', 'all',
      'x-authenticated-groups', 'wheel',
      'X-Credential-Identifier', 'forged',
      'x-anonymous-consumer', 'false',
      'Accept', 'a',
      'accept', 'b',
      'x-consumer', 'not an identity header',
    ]);
    expect(req.headers['x-consumer-username']).toBe('mallory');
    scrubClientHeaders(req, false);
    expect(req.rawHeaders).toEqual(['Host', 'gw', 'Accept', 'a', 'accept', 'b', 'x-consumer', 'not an identity header']);
    expect(req.headers).toEqual({ host: 'gw', accept: 'a, b', 'x-consumer': 'not an identity header' });
  });

  it('keeps underscore names when allowed, never identity headers', () => {
    const req = requestWith(['x_trace_id', '1', 'x-consumer-id', 'forged', 'x-other', 'y']);
    scrubClientHeaders(req, true);
    expect(req.rawHeaders).toEqual(['x_trace_id', '1', 'x-other', 'y']);
    expect(req.headers).toEqual({ x_trace_id: '1', 'x-other': 'y' });
  });

  it('leaves a clean request untouched (same rawHeaders array)', () => {
    const raw = ['Host', 'gw', 'Authorization', 'Basic x', 'X-Forwarded-For', '1.2.3.4'];
    const req = requestWith(raw);
    scrubClientHeaders(req, false);
    expect(req.rawHeaders).toBe(raw);
  });

  it('knows every identity header', () => {
    for (const name of ['x-consumer-id', 'x-consumer-custom-id', 'x-consumer-groups', 'x-credential-identifier', 'x-anonymous-consumer', 'x-authenticated-scope', 'x-authenticated-userid', 'x-authenticated-groups']) {
      expect(isIdentityHeader(name)).toBe(true);
    }
    for (const name of ['x-consumer', 'x-forwarded-for', 'authorization']) expect(isIdentityHeader(name)).toBe(false);
  });
});
