import { createWriteStream, type WriteStream } from 'node:fs';
import { LineBuffer } from './line-buffer';

export interface AppendLogOptions {
  /** open the file for each batch and close it after (Kong file-log's `reopen`), instead of keeping it open */
  reopenEachBatch?: boolean;
  /** lines waiting past this many bytes are dropped and counted; default 16 MiB */
  maxPendingBytes?: number;
  /**
   * how long a line may wait for others to join its batch (ms); 0 (the default) writes each event-loop turn's lines
   * on the next turn. A batch goes out sooner once `flushBytes` wait.
   */
  flushDelayMs?: number;
  /** with `flushDelayMs`: a batch is written as soon as this many bytes wait; default 64 KiB */
  flushBytes?: number;
  /** told once per failure of the destination (a file that cannot be opened) */
  onError?: (err: Error) => void;
  /** every line written is ASCII (the writer escapes everything else), so it is copied byte for byte */
  asciiLines?: boolean;
}

/**
 * Lines appended to a file or to stdout without blocking whoever writes them: `write` only queues the line; batches are
 * written later (on the next turn, or after `flushDelayMs` / once `flushBytes` wait), one batch at a time, waiting for
 * the destination to take each. `reopen()` hands what waits to the current file and makes the next batch open the
 * path again (log rotation after SIGUSR1). `drained()` and `close()` write what waits at once. When the destination
 * falls behind by `maxPendingBytes`, new lines are dropped and counted.
 */
export class AppendLog {
  private readonly pending: LineBuffer;
  /** a flush is due: on the next turn (setImmediate) or when the delay ends (setTimeout) */
  private due: NodeJS.Immediate | NodeJS.Timeout | null = null;
  private dueSoon = false;
  /** batches handed to the destination and not yet taken */
  private writing = 0;
  private stream: WriteStream | null = null;
  private closed = false;
  private idle: Array<() => void> = [];
  private readonly maxPendingBytes: number;
  private readonly flushDelayMs: number;
  private readonly flushBytes: number;
  /** lines dropped because the destination fell behind */
  dropped = 0;
  /** lines written */
  written = 0;

  constructor(
    /** a file path, or `stdout` */
    readonly destination: string,
    private readonly options: AppendLogOptions = {},
  ) {
    this.pending = new LineBuffer(options.asciiLines ?? false);
    this.maxPendingBytes = options.maxPendingBytes ?? 16 * 1024 * 1024;
    this.flushDelayMs = options.flushDelayMs ?? 0;
    this.flushBytes = this.flushDelayMs > 0 ? (options.flushBytes ?? 64 * 1024) : 0;
  }

  write(line: string): void {
    if (this.closed) return;
    if (this.pending.bytes + line.length > this.maxPendingBytes) {
      this.dropped++;
      return;
    }
    this.pending.add(line);
    // a batch in flight takes up what waits when it is done
    if (this.writing === 0) this.schedule();
  }

  /** what waits goes to the current file; the next batch opens the path again (the old file may have been moved away) */
  reopen(): void {
    if (this.stream !== null && this.pending.lines > 0) this.writeBatch(this.stream);
    this.release();
  }

  /** resolves once every line queued so far was handed to the destination */
  drained(): Promise<void> {
    if (this.writing === 0 && this.pending.lines === 0) return Promise.resolve();
    const settled = new Promise<void>((resolve) => this.idle.push(resolve));
    if (this.writing === 0) this.flush();
    return settled;
  }

  async close(): Promise<void> {
    await this.drained();
    this.closed = true;
    this.cancelDue();
    const stream = this.stream;
    this.stream = null;
    if (stream) await new Promise<void>((resolve) => stream.end(resolve));
  }

  /** a flush on the next turn once enough waits (or without a delay), else when the delay ends */
  private schedule(): void {
    if (this.flushDelayMs === 0 || this.pending.bytes >= this.flushBytes) {
      if (this.due !== null && this.dueSoon) return;
      this.cancelDue();
      this.dueSoon = true;
      this.due = setImmediate(() => this.flush());
    } else if (this.due === null) {
      this.dueSoon = false;
      this.due = setTimeout(() => this.flush(), this.flushDelayMs);
    }
  }

  private cancelDue(): void {
    const due = this.due;
    if (due === null) return;
    this.due = null;
    if (this.dueSoon) clearImmediate(due as NodeJS.Immediate);
    else clearTimeout(due as NodeJS.Timeout);
  }

  private release(): void {
    const stream = this.stream;
    this.stream = null;
    stream?.end();
  }

  private target(): NodeJS.WritableStream {
    if (this.destination === 'stdout') return process.stdout;
    if (this.stream === null) {
      const stream = createWriteStream(this.destination, { flags: 'a' });
      stream.on('error', (err) => {
        if (this.stream === stream) this.stream = null;
        this.options.onError?.(err);
      });
      this.stream = stream;
    }
    return this.stream;
  }

  private flush(): void {
    this.cancelDue();
    if (this.pending.lines === 0) {
      if (this.writing === 0) this.settle();
      return;
    }
    this.writeBatch(this.target());
  }

  /** hands what waits to `target`: one write, or one corked series of chunk writes */
  private writeBatch(target: NodeJS.WritableStream): void {
    this.cancelDue();
    this.written += this.pending.lines;
    const chunks = this.pending.take();
    this.writing++;
    const done = () => {
      this.pending.recycle(chunks);
      this.batchDone();
    };
    try {
      // the callback of the last chunk runs once the batch reached the destination (or failed): one batch at a time.
      // stdout may be a pipe other processes write to too (a data plane's proxy workers): pieces of whole lines no
      // longer than PIPE_BUF are written atomically, so lines never interleave
      const parts = this.destination === 'stdout' ? chunks.flatMap((chunk) => (chunk.length > PIPE_BUF ? linePieces(chunk, PIPE_BUF) : [chunk])) : chunks;
      if (parts.length === 1) target.write(parts[0]!, done);
      else {
        const stream = target as NodeJS.WritableStream & { cork?(): void; uncork?(): void };
        stream.cork?.();
        for (let i = 0; i < parts.length - 1; i++) target.write(parts[i]!);
        target.write(parts[parts.length - 1]!, done);
        stream.uncork?.();
      }
    } catch (err) {
      this.options.onError?.(err as Error);
      this.batchDone();
    }
  }

  private batchDone(): void {
    if (--this.writing > 0) return;
    if (this.options.reopenEachBatch && this.destination !== 'stdout') this.release();
    if (this.pending.lines === 0) this.settle();
    // someone waits for everything: no delay
    else if (this.idle.length > 0) this.flush();
    else this.schedule();
  }

  private settle(): void {
    const waiting = this.idle;
    this.idle = [];
    for (const resolve of waiting) resolve();
  }
}

/** the size up to which a write to a pipe is atomic (Linux, and the POSIX minimum is 512) */
const PIPE_BUF = 4096;

/** `data` (whole lines) cut at line ends into pieces of at most `max` bytes; a longer line is a piece of its own. */
export function linePieces(data: Buffer, max: number): Buffer[] {
  const pieces: Buffer[] = [];
  let start = 0;
  let pos = 0;
  while (pos < data.length) {
    const newline = data.indexOf(0x0a, pos);
    const stop = newline < 0 ? data.length : newline + 1;
    if (pos > start && stop - start > max) {
      pieces.push(data.subarray(start, pos));
      start = pos;
    }
    pos = stop;
  }
  if (start < data.length) pieces.push(data.subarray(start));
  return pieces;
}
