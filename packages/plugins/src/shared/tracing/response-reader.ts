import { HTTPParser, type LlhttpParser, type OnHeadersComplete } from '@gatehouse/core';

/** a response head larger than this is refused */
const MAX_HEAD_BYTES = 64 * 1024;

/** An HTTP/1.1 response read whole. */
export interface ReadResponse {
  status: number;
  body: Buffer;
  /** whether the connection may carry another request */
  keepAlive: boolean;
}

/**
 * Reads the HTTP/1.1 response to one request from the bytes of its connection, as they come, with llhttp (the parser
 * of node:http and of the upstream client): a body framed by `content-length`, by chunked transfer coding or by the
 * connection's close. Informational answers (100 Continue) are skipped. Throws on bytes that are not an HTTP/1.x
 * response.
 */
export class ResponseReader {
  private readonly parser: LlhttpParser = new HTTPParser();
  private status = 0;
  private keepAlive = true;
  private complete = false;
  /** the parser is freed: after the response, or after bytes it refused */
  private freed = false;
  private readonly body: Buffer[] = [];

  constructor() {
    const parser = this.parser;
    parser.initialize(HTTPParser.RESPONSE, {}, MAX_HEAD_BYTES, HTTPParser.kLenientNone);
    parser[HTTPParser.kOnMessageBegin] = () => 0;
    parser[HTTPParser.kOnHeaders] = () => undefined;
    parser[HTTPParser.kOnHeadersComplete] = ((_major, _minor, _headers, _method, _url, status, _text, _upgrade, keepAlive) => {
      if (!this.complete) {
        this.status = status;
        this.keepAlive = keepAlive;
      }
      return 0;
    }) satisfies OnHeadersComplete;
    parser[HTTPParser.kOnBody] = (chunk: Buffer) => {
      if (!this.complete) this.body.push(chunk);
    };
    // an informational answer is a message of its own: the response is the first final one
    parser[HTTPParser.kOnMessageComplete] = () => {
      if (this.status >= 200) this.complete = true;
    };
  }

  /** takes the next bytes; the response once it is complete, else null */
  feed(chunk: Buffer): ReadResponse | null {
    if (this.freed) return null;
    const parsed = this.parser.execute(chunk);
    if (typeof parsed !== 'number' && !this.complete) {
      this.free();
      throw new Error(`invalid response: ${parsed.reason ?? parsed.code}`);
    }
    return this.done();
  }

  /** the connection ended: the response when its body was framed by the close, else null (it was cut short) */
  end(): ReadResponse | null {
    if (this.freed) return null;
    if (!this.complete) this.parser.finish();
    this.keepAlive = false;
    return this.done();
  }

  private done(): ReadResponse | null {
    if (!this.complete) return null;
    this.free();
    return { status: this.status, body: this.body.length === 1 ? this.body[0]! : Buffer.concat(this.body), keepAlive: this.keepAlive };
  }

  private free(): void {
    this.freed = true;
    this.parser.close();
  }
}
