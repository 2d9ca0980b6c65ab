const EMPTY = Buffer.alloc(0);
const HEAD_END = Buffer.from('\r\n\r\n');
const LINE_END = Buffer.from('\r\n');
/** a response head larger than this is refused */
const MAX_HEAD_BYTES = 64 * 1024;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})/;

/** An HTTP/1.1 response read whole. */
export interface ReadResponse {
  status: number;
  body: Buffer;
  /** whether the connection may carry another request */
  keepAlive: boolean;
}

type Mode = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'trailer' | 'close';

/**
 * Reads the HTTP/1.1 response to one request from the bytes of its connection, as they come: the status line and
 * headers, then a body framed by `content-length`, by chunked transfer coding, or by the connection's close.
 * Informational answers (100 Continue) are skipped. Throws on bytes that are not an HTTP/1.x response.
 */
export class ResponseReader {
  private pending: Buffer = EMPTY;
  private mode: Mode = 'head';
  private status = 0;
  private keepAlive = true;
  private remaining = 0;
  private readonly body: Buffer[] = [];

  /** takes the next bytes; the response once it is complete, else null */
  feed(chunk: Buffer): ReadResponse | null {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    for (;;) {
      const step = this.step();
      if (step === 'done') return this.response();
      if (step === 'more') return null;
    }
  }

  /** the connection ended: the response when its body was framed by the close, else null (it was cut short) */
  end(): ReadResponse | null {
    if (this.mode !== 'close') return null;
    this.body.push(this.pending);
    this.keepAlive = false;
    return this.response();
  }

  private response(): ReadResponse {
    return { status: this.status, body: this.body.length === 1 ? this.body[0]! : Buffer.concat(this.body), keepAlive: this.keepAlive };
  }

  private take(bytes: number): Buffer {
    const taken = this.pending.subarray(0, bytes);
    this.pending = this.pending.subarray(bytes);
    return taken;
  }

  /** advances by what the pending bytes allow: 'done', 'more' (wait for bytes) or 'again' */
  private step(): 'done' | 'more' | 'again' {
    switch (this.mode) {
      case 'head':
        return this.readHead();
      case 'length': {
        if (this.pending.length < this.remaining) return 'more';
        this.body.push(this.take(this.remaining));
        return 'done';
      }
      case 'chunk-size': {
        const end = this.pending.indexOf(LINE_END);
        if (end < 0) return 'more';
        const size = parseInt(this.take(end + 2).toString('latin1').split(';')[0]!.trim(), 16);
        if (Number.isNaN(size)) throw new Error('invalid chunk size in response');
        this.remaining = size;
        this.mode = size === 0 ? 'trailer' : 'chunk-data';
        return 'again';
      }
      case 'chunk-data': {
        if (this.pending.length < this.remaining + 2) return 'more';
        this.body.push(this.take(this.remaining));
        this.take(2);
        this.mode = 'chunk-size';
        return 'again';
      }
      case 'trailer': {
        const end = this.pending.indexOf(LINE_END);
        if (end < 0) return 'more';
        this.take(end + 2);
        // an empty line ends the trailers
        return end === 0 ? 'done' : 'again';
      }
      case 'close':
        this.body.push(this.take(this.pending.length));
        return 'more';
    }
  }

  private readHead(): 'done' | 'more' | 'again' {
    const end = this.pending.indexOf(HEAD_END);
    if (end < 0) {
      if (this.pending.length > MAX_HEAD_BYTES) throw new Error('response head too large');
      return 'more';
    }
    const lines = this.take(end + 4).toString('latin1', 0, end).split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (status === null) throw new Error(`invalid response: ${JSON.stringify(lines[0]!.slice(0, 40))}`);
    this.status = Number(status[2]);
    let connection = status[1] === '1' ? 'keep-alive' : 'close';
    let length: number | null = null;
    let chunked = false;
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i]!.indexOf(':');
      if (colon <= 0) continue;
      const name = lines[i]!.slice(0, colon).trim().toLowerCase();
      const value = lines[i]!.slice(colon + 1).trim().toLowerCase();
      if (name === 'content-length') length = Number(value);
      else if (name === 'transfer-encoding') chunked = value.split(',').some((coding) => coding.trim() === 'chunked');
      else if (name === 'connection') connection = value;
    }
    this.keepAlive = !connection.split(',').some((option) => option.trim() === 'close');
    if (this.status >= 100 && this.status < 200) return 'again';
    if (this.status === 204 || this.status === 304) return 'done';
    if (chunked) this.mode = 'chunk-size';
    else if (length !== null) {
      if (!Number.isSafeInteger(length) || length < 0) throw new Error('invalid content-length in response');
      this.mode = 'length';
      this.remaining = length;
    } else {
      this.mode = 'close';
      this.keepAlive = false;
    }
    return 'again';
  }
}
