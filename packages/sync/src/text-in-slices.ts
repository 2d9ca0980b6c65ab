// Large texts (a signed snapshot of 100,000 consumers is tens of megabytes) moved through Node without one native
// buffer of their whole size. A native buffer of several megabytes is allocated by malloc outside the V8 heap; once it
// is freed, glibc raises its threshold for giving memory back to the system to that size, and the process keeps what
// later allocations below it leave behind (about 40 MiB of a data plane's resident size after loading such a
// snapshot). Slices of SLICE_CHARS stay below the threshold and are reused from one to the next; the JavaScript
// strings they become live in the V8 heap, which returns its pages itself.
import { createHmac, type Hmac } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';

/** characters (of ASCII text: bytes) per slice; below glibc's initial mmap threshold of 128 KiB */
export const SLICE_CHARS = 64 * 1024;

/** the whole file as UTF-8 text, read a slice at a time */
export async function readTextInSlices(file: string): Promise<string> {
  const pieces: string[] = [];
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: SLICE_CHARS });
  for await (const piece of stream) pieces.push(piece as string);
  return pieces.join('');
}

/** `text` in slices of about SLICE_CHARS, never splitting a surrogate pair (its halves would each encode as U+FFFD) */
export function* slicesOf(text: string): Generator<string> {
  let at = 0;
  while (at < text.length) {
    let end = Math.min(text.length, at + SLICE_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    yield text.slice(at, end);
    at = end;
  }
}

/** writes `text` as UTF-8 from the handle's position, a slice at a time */
export async function writeTextInSlices(handle: FileHandle, text: string): Promise<void> {
  // writeFile goes on from the handle's position and loops over partial writes
  for (const slice of slicesOf(text)) await handle.writeFile(slice, 'utf8');
}

/** HMAC-SHA256 of the UTF-8 bytes of `text`, fed a slice at a time (the same digest as of the whole text) */
export function hmacInSlices(text: string, secret: string): Buffer {
  const mac: Hmac = createHmac('sha256', secret);
  for (const slice of slicesOf(text)) mac.update(slice, 'utf8');
  return mac.digest();
}

/** base64 text → its bytes, a slice at a time */
export function* base64Slices(payload: string): Generator<Buffer> {
  // a multiple of 4 base64 characters decodes on its own
  const step = SLICE_CHARS - (SLICE_CHARS % 4);
  for (let at = 0; at < payload.length; at += step) yield Buffer.from(payload.slice(at, at + step), 'base64');
}

/**
 * gzip bytes given a slice at a time → the UTF-8 text, decompressed in the thread pool; rejects on a corrupt stream or
 * when `slices` throws (the source is read only as fast as gunzip takes it)
 */
export function gunzipSlices(slices: Iterator<Buffer>): Promise<string> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip({ chunkSize: SLICE_CHARS });
    const decoder = new StringDecoder('utf8');
    const pieces: string[] = [];
    let failed = false;
    gunzip.on('data', (chunk: Buffer) => pieces.push(decoder.write(chunk)));
    gunzip.on('error', (error) => {
      failed = true;
      reject(error);
    });
    gunzip.on('end', () => {
      pieces.push(decoder.end());
      if (!failed) resolve(pieces.join(''));
    });
    const feed = (): void => {
      try {
        for (;;) {
          const next = slices.next();
          if (next.done) break;
          if (!gunzip.write(next.value)) {
            gunzip.once('drain', feed);
            return;
          }
        }
      } catch (error) {
        failed = true;
        gunzip.destroy();
        reject(error as Error);
        return;
      }
      gunzip.end();
    };
    feed();
  });
}

/** base64(gzip(UTF-8 text)) → the text, decoded and decompressed a slice at a time; rejects on a corrupt payload */
export function gunzipBase64(payload: string): Promise<string> {
  return gunzipSlices(base64Slices(payload));
}
