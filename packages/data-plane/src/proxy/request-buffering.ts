import { Readable } from 'node:stream';
import type { Exchange } from '../pipeline/exchange';
import { sendsBody } from './upstream-request';

/**
 * Kong's `request_buffering` (on by default): the client's whole body is read before the upstream request goes,
 * which then carries it with a Content-Length (a chunked upload included), and can be sent again to another target.
 * Resolves once that is done; null when there is nothing to read (no body, or a plugin has it already).
 *
 * A body past the buffering limit (GATEHOUSE_MAX_BUFFERED_BODY), or whose stream fails (a plugin's size limit), is
 * not refused here: it goes upstream as a stream, what was read first, then the rest, so that limits and their
 * answers stay those of a streamed body.
 */
export function bufferRequestBody(ex: Exchange, limit: number): Promise<void> | null {
  if (ex.body !== null || !sendsBody(ex.incoming.headers)) return null;
  const source = ex.bodySource ?? ex.incoming;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    };
    const streamOn = (error: unknown) => {
      stop();
      source.pause();
      ex.bodySource = Readable.from(replay(chunks, source, error), { objectMode: false });
      resolve();
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) streamOn(null);
    };
    const onEnd = () => {
      stop();
      ex.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      resolve();
    };
    const onError = (err: unknown) => streamOn(err ?? new Error('request body failed'));
    // the client left before its body ended: the upstream request fails with it
    const onClose = () => streamOn(new Error('client closed the connection'));
    source.on('data', onData);
    source.once('close', onClose);
    source.once('end', onEnd);
    source.once('error', onError);
  });
}

/** What was read, then the error the source failed with, or the rest of the source. */
async function* replay(chunks: readonly Buffer[], source: Readable, error: unknown): AsyncGenerator<Buffer> {
  yield* chunks;
  if (error !== null) throw error;
  for await (const chunk of source) yield chunk as Buffer;
}
