import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { BODY_TOO_LARGE, BodyTooLargeError, parseByteSize, readLimitedBody } from './limited-body';

describe('readLimitedBody', () => {
  it('buffers a body up to the limit, the limit itself included', async () => {
    expect((await readLimitedBody(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 4)).toString()).toBe('abcd');
    expect((await readLimitedBody(Readable.from([]), 4)).length).toBe(0);
  });

  it('refuses a declared length past the limit before reading anything', async () => {
    const stream = new PassThrough();
    stream.write('x');
    await expect(readLimitedBody(stream, 10, '11')).rejects.toBeInstanceOf(BodyTooLargeError);
    // nothing was consumed
    expect(stream.read()?.toString()).toBe('x');
  });

  it('stops at the first chunk past the limit, keeps nothing and stops listening', async () => {
    const stream = new PassThrough();
    const read = readLimitedBody(stream, 5);
    stream.write(Buffer.from('abc'));
    stream.write(Buffer.from('def'));
    const err = await read.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BodyTooLargeError);
    expect((err as BodyTooLargeError).response).toEqual({ status: 413, body: { message: 'Request size limit exceeded' } });
    expect(stream.listenerCount('data')).toBe(0);
    expect(BODY_TOO_LARGE.status).toBe(413);
  });
});

describe('parseByteSize', () => {
  it('reads bytes, k and m', () => {
    expect([parseByteSize('0'), parseByteSize('10'), parseByteSize('8k'), parseByteSize('8m'), parseByteSize('3K'), parseByteSize(' 1M ')]).toEqual([
      0,
      10,
      8192,
      8 * 1024 * 1024,
      3072,
      1024 * 1024,
    ]);
  });

  it('throws on anything else', () => {
    for (const bad of ['', 'm', '1.5m', '8g', '-1', '1 mb']) expect(() => parseByteSize(bad, 'X')).toThrow(/X must be/);
  });
});
