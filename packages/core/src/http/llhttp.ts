// Node's binding of llhttp, the parser behind node:http, for the gateway's own HTTP/1.1 clients (the upstream client, the tracing exporters)
import { createRequire } from 'node:module';

/** The failure llhttp reports for a message it refuses (`HPE_…` code and its reason). */
export interface LlhttpError extends Error {
  code: string;
  reason?: string;
  bytesParsed?: number;
}

/** Node's binding of llhttp, the parser behind node:http: the few members a response parser uses. */
export interface LlhttpParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  /** parses what arrived; the callbacks run inside, in order */
  execute(data: Buffer): number | LlhttpError;
  /** the connection ended: completes a body that runs to the end, or reports the message cut short */
  finish(): LlhttpError | undefined;
  close(): void;
  [callback: number]: unknown;
}

interface LlhttpBinding {
  new (): LlhttpParser;
  readonly RESPONSE: number;
  readonly kOnMessageBegin: number;
  readonly kOnHeaders: number;
  readonly kOnHeadersComplete: number;
  readonly kOnBody: number;
  readonly kOnMessageComplete: number;
  readonly kLenientNone: number;
}

/** `_http_common` is Node's own module for node:http; it hands out the parser binding without a warning. */
export const HTTPParser = (createRequire(import.meta.url)('node:_http_common') as { HTTPParser: LlhttpBinding }).HTTPParser;

/** Callback of a complete head: `headers` is undefined when it came in parts (kOnHeaders) before. */
export type OnHeadersComplete = (
  versionMajor: number,
  versionMinor: number,
  headers: string[] | undefined,
  method: number | undefined,
  url: string | undefined,
  statusCode: number,
  statusMessage: string,
  upgrade: boolean,
  shouldKeepAlive: boolean,
) => number;
