/** Bytes of a chunk: lines are encoded into chunks of this size, handed to the destination whole. */
const CHUNK_BYTES = 64 * 1024;
/** chunks kept for reuse once written: enough for a whole batch of the access log (512 KiB), so none is allocated per batch */
const SPARE_CHUNKS = 8;

/**
 * Lines waiting to be written, encoded (UTF-8, newline-terminated) straight into reusable byte chunks: one copy per
 * line, no joined string, no allocation per line. `take()` hands out what waits; `recycle()` gives the chunks back once
 * the destination has them.
 */
export class LineBuffer {
  private full: Buffer[] = [];
  private chunk: Buffer | null = null;
  private used = 0;
  private readonly spare: Buffer[] = [];
  /** bytes waiting */
  bytes = 0;
  /** lines waiting */
  lines = 0;

  add(line: string): void {
    // a UTF-16 code unit never takes more than 3 bytes in UTF-8
    const room = line.length * 3 + 1;
    let chunk = this.chunk;
    if (chunk === null || this.used + room > chunk.length) chunk = this.nextChunk(room);
    const n = chunk.write(line, this.used);
    chunk[this.used + n] = 10;
    this.used += n + 1;
    this.bytes += n + 1;
    this.lines++;
  }

  /** every waiting byte, in order; the buffer is empty after */
  take(): Buffer[] {
    const out = this.full;
    if (this.chunk !== null && this.used > 0) out.push(this.chunk.subarray(0, this.used));
    this.full = [];
    this.chunk = null;
    this.used = 0;
    this.bytes = 0;
    this.lines = 0;
    return out;
  }

  /** chunks from `take()` the destination is done with */
  recycle(chunks: Buffer[]): void {
    for (const c of chunks) {
      if (this.spare.length >= SPARE_CHUNKS) return;
      // a standard chunk (allocated on its own) is kept whole; a one-off larger one is let go
      if (c.buffer.byteLength === CHUNK_BYTES) this.spare.push(Buffer.from(c.buffer, 0, CHUNK_BYTES));
    }
  }

  private nextChunk(room: number): Buffer {
    if (this.chunk !== null && this.used > 0) this.full.push(this.chunk.subarray(0, this.used));
    const chunk = room > CHUNK_BYTES ? Buffer.allocUnsafeSlow(room) : (this.spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES));
    this.chunk = chunk;
    this.used = 0;
    return chunk;
  }
}
