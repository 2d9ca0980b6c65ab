import { HTTPParser, type LlhttpParser, type OnHeadersComplete } from '@gatehouse/core';
import { STOP_AFTER_HEAD } from './response-framing';

/** What the upstream client does with llhttp's events on a response. */
export interface ResponseEvents {
  messageBegins(): number;
  /** head lines that came before the head completed (a long head), or trailers after it */
  headerPart(headers: string[]): void;
  /** a head (interim or final) is complete; STOP_AFTER_HEAD when the client reads the body itself */
  headersComplete(given: string[] | undefined, status: number, upgrade: boolean, keepAlive: boolean): number;
  body(chunk: Buffer): void;
  messageComplete(): number;
}

/**
 * llhttp (Node's binding, strict) reading responses for `events`. It remembers whether it stopped after a head
 * (STOP_AFTER_HEAD), so that `restartIfStopped()` resets it only then: a response read by the narrow path
 * (`simpleResponseHead`) never touched it, and needs no reset.
 */
export class ResponseParser {
  readonly llhttp: LlhttpParser = new HTTPParser();
  private stoppedAfterHead = false;

  constructor(events: ResponseEvents) {
    const parser = this.llhttp;
    parser.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientNone);
    parser[HTTPParser.kOnMessageBegin] = () => events.messageBegins();
    parser[HTTPParser.kOnHeaders] = (headers: string[]) => events.headerPart(headers);
    parser[HTTPParser.kOnHeadersComplete] = ((_major, _minor, headers, _method, _url, status, _text, upgrade, keepAlive) => {
      const next = events.headersComplete(headers, status, upgrade, keepAlive);
      if (next === STOP_AFTER_HEAD) this.stoppedAfterHead = true;
      return next;
    }) satisfies OnHeadersComplete;
    parser[HTTPParser.kOnBody] = (chunk: Buffer) => events.body(chunk);
    parser[HTTPParser.kOnMessageComplete] = () => events.messageComplete();
  }

  /** after a body the client read itself: llhttp, stopped after the head as for an upgrade, starts afresh */
  restartIfStopped(): void {
    if (!this.stoppedAfterHead) return;
    this.stoppedAfterHead = false;
    this.llhttp.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientNone);
  }
}
