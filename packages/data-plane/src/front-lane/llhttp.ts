import { createRequire } from 'node:module';

/** node:http's own request parser (llhttp), as its server drives it: the same strictness, errors and limits. */
export interface RequestParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | ParseError;
  close(): void;
  [callback: number]: unknown;
}

export interface ParseError extends Error {
  code: string;
  bytesParsed: number;
}

interface ParserModule {
  HTTPParser: {
    new (): RequestParser;
    REQUEST: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
    kLenientNone: number;
  };
  methods: readonly string[];
}

// a built-in module: any absolute path resolves it; loaded without a warning on Node 20 and later
const parserModule = createRequire(process.execPath)('node:_http_common') as ParserModule;

export const HTTPParser = parserModule.HTTPParser;
/** method names by the parser's method index */
export const methods = parserModule.methods;
