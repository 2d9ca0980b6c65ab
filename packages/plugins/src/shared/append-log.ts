import { createWriteStream, type WriteStream } from 'node:fs';

export interface AppendLogOptions {
  /** open the file for each batch and close it after (Kong file-log's `reopen`), instead of keeping it open */
  reopenEachBatch?: boolean;
  /** lines waiting past this many bytes are dropped and counted; default 16 MiB */
  maxPendingBytes?: number;
  /** told once per failure of the destination (a file that cannot be opened) */
  onError?: (err: Error) => void;
}

/**
 * Lines appended to a file or to stdout without blocking whoever writes them: `write` only queues the line; batches are
 * written on a later turn, one write at a time, waiting for the destination to drain. `reopen()` makes the next batch
 * open the path again (log rotation after SIGUSR1). When the destination falls behind by `maxPendingBytes`, new lines
 * are dropped and counted.
 */
export class AppendLog {
  private pending: string[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  private writing = false;
  private stream: WriteStream | null = null;
  private closed = false;
  private idle: Array<() => void> = [];
  /** lines dropped because the destination fell behind */
  dropped = 0;
  /** lines written */
  written = 0;

  constructor(
    /** a file path, or `stdout` */
    readonly destination: string,
    private readonly options: AppendLogOptions = {},
  ) {}

  write(line: string): void {
    if (this.closed) return;
    if (this.pendingBytes + line.length > (this.options.maxPendingBytes ?? 16 * 1024 * 1024)) {
      this.dropped++;
      return;
    }
    this.pending.push(line);
    this.pendingBytes += line.length + 1;
    if (!this.scheduled && !this.writing) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** the next batch opens the file again (the old one may have been moved away) */
  reopen(): void {
    const stream = this.stream;
    this.stream = null;
    stream?.end();
  }

  /** resolves once every line queued so far was handed to the destination */
  drained(): Promise<void> {
    if (!this.writing && !this.scheduled && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async close(): Promise<void> {
    await this.drained();
    this.closed = true;
    const stream = this.stream;
    this.stream = null;
    if (stream) await new Promise<void>((resolve) => stream.end(resolve));
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
    this.scheduled = false;
    if (this.pending.length === 0) return this.settle();
    const batch = `${this.pending.join('\n')}\n`;
    this.written += this.pending.length;
    this.pending = [];
    this.pendingBytes = 0;
    this.writing = true;
    const target = this.target();
    const done = () => {
      if (this.options.reopenEachBatch && this.destination !== 'stdout') this.reopen();
      this.writing = false;
      if (this.pending.length > 0) this.flush();
      else this.settle();
    };
    try {
      // the callback runs once the batch reached the destination (or failed): one batch at a time. stdout may be a
      // pipe other processes write to too (a data plane's proxy workers): pieces of whole lines no longer than
      // PIPE_BUF are written atomically, so lines never interleave
      if (this.destination === 'stdout' && batch.length > PIPE_BUF) {
        const pieces = linePieces(batch, PIPE_BUF);
        for (let i = 0; i < pieces.length - 1; i++) target.write(pieces[i]!);
        target.write(pieces[pieces.length - 1]!, () => done());
      } else {
        target.write(batch, () => done());
      }
    } catch (err) {
      this.options.onError?.(err as Error);
      done();
    }
  }

  private settle(): void {
    const waiting = this.idle;
    this.idle = [];
    for (const resolve of waiting) resolve();
  }
}

/** the size up to which a write to a pipe is atomic (Linux, and the POSIX minimum is 512) */
const PIPE_BUF = 4096;

/** `text` (whole lines) cut at line ends into pieces of at most `max` bytes; a longer line is a piece of its own. */
export function linePieces(text: string, max: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  let bytes = 0;
  let pos = 0;
  while (pos < text.length) {
    const newline = text.indexOf('\n', pos);
    const stop = newline < 0 ? text.length : newline + 1;
    const size = Buffer.byteLength(text.slice(pos, stop), 'utf8');
    if (pos > start && bytes + size > max) {
      pieces.push(text.slice(start, pos));
      start = pos;
      bytes = 0;
    }
    bytes += size;
    pos = stop;
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}
