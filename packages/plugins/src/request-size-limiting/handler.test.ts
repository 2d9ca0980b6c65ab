import { Readable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { RequestRefused } from '../contract';
import { fakeContext } from '../../test/support/fake-context';
import { requestSizeLimitingAccess } from './handler';
import { requestSizeLimiting } from './index';
import { requestSizeLimitingConfigSchema } from './schema';

const TOO_LARGE = { status: 413, body: { message: 'Request size limit exceeded' } };

function run(config: Record<string, unknown>, headers: Record<string, string>) {
  const { ctx, recorded } = fakeContext({ method: 'POST', headers });
  return { answer: requestSizeLimitingAccess(ctx, requestSizeLimitingConfigSchema.parse(config)), recorded };
}

async function drain(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('request-size-limiting', () => {
  it("Kong's name, priority and defaults (128 megabytes)", () => {
    expect([requestSizeLimiting.name, requestSizeLimiting.priority]).toEqual(['request-size-limiting', 951]);
    expect(requestSizeLimitingConfigSchema.parse({})).toEqual({ allowed_payload_size: 128, size_unit: 'megabytes', require_content_length: false });
    expect(requestSizeLimitingConfigSchema.safeParse({ size_unit: 'gigabytes' }).success).toBe(false);
  });

  it('compares Content-Length in the configured unit', () => {
    expect(run({}, { 'content-length': String(128 * 1024 * 1024) }).answer).toBeUndefined();
    expect(run({}, { 'content-length': String(128 * 1024 * 1024 + 1) }).answer).toEqual(TOO_LARGE);
    expect(run({ allowed_payload_size: 2, size_unit: 'kilobytes' }, { 'content-length': '2049' }).answer).toEqual(TOO_LARGE);
    expect(run({ allowed_payload_size: 2, size_unit: 'bytes' }, { 'content-length': '2' }).answer).toBeUndefined();
  });

  it('answers 417 when the client expects 100-continue', () => {
    expect(run({ allowed_payload_size: 1, size_unit: 'bytes' }, { 'content-length': '2', expect: '100-continue' }).answer).toEqual({ status: 417, body: { message: 'Request size limit exceeded' } });
  });

  it('require_content_length: 411 with neither a Content-Length nor a chunked body', () => {
    expect(run({ require_content_length: true }, {}).answer).toEqual({ status: 411, body: { message: 'A valid Content-Length header is required' } });
    expect(run({ require_content_length: true }, { 'transfer-encoding': 'gzip' }).answer?.status).toBe(411);
    expect(run({ require_content_length: true }, { 'content-length': '0' }).answer).toBeUndefined();
    // a chunked body passes, counted as it streams
    const chunked = run({ require_content_length: true, allowed_payload_size: 5, size_unit: 'bytes' }, { 'transfer-encoding': 'Chunked' });
    expect(chunked.answer).toBeUndefined();
    expect(chunked.recorded.wrappers).toHaveLength(1);
    expect(run({ require_content_length: true }, { 'transfer-encoding': 'gzip, chunked' }).answer).toBeUndefined();
  });

  it('counts a chunked body as it streams: within the limit it passes whole, past it the stream fails with the 413', async () => {
    const within = run({ allowed_payload_size: 5, size_unit: 'bytes' }, { 'transfer-encoding': 'chunked' });
    expect(within.answer).toBeUndefined();
    expect(within.recorded.wrappers).toHaveLength(1);
    expect(await drain(within.recorded.wrappers[0]!(Readable.from([Buffer.from('ab'), Buffer.from('cde')])))).toBe('abcde');

    const past = run({ allowed_payload_size: 5, size_unit: 'bytes' }, { 'transfer-encoding': 'chunked' });
    const failure = await drain(past.recorded.wrappers[0]!(Readable.from([Buffer.from('abc'), Buffer.from('def')]))).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(RequestRefused);
    expect((failure as RequestRefused).response).toEqual(TOO_LARGE);
  });

  it('a request without a body is left alone', () => {
    expect(run({}, {}).recorded.wrappers).toHaveLength(0);
  });
});
