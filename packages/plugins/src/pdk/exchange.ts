import type { ExchangeSummary, PluginContext, PluginLogger, PluginResponse, UpstreamResponse } from '../contract';

/** The Kong phases a snippet may run in, in the order a request meets them. */
export type PdkPhase = 'certificate' | 'rewrite' | 'access' | 'header_filter' | 'body_filter' | 'log';

/**
 * One request as the PDK subset sees it while a snippet runs: the plugin context plus what the phase adds (the
 * upstream's response in header_filter/body_filter, the finished exchange in log) and what the snippet did (an exit,
 * `ngx.say` output, `ngx.status`).
 */
export interface PdkExchange {
  readonly ctx: PluginContext;
  readonly phase: PdkPhase;
  /** the plugin whose snippet runs, for log lines */
  readonly plugin: string;
  readonly logger: PluginLogger;
  /** the request body, read before the phase ran when its snippets ask for it */
  requestBody: Buffer | null;
  /** header_filter and body_filter: the upstream's response */
  readonly response?: UpstreamResponse;
  /** body_filter: the response body, and what a snippet replaced it with */
  responseBody?: Buffer;
  replacedResponseBody?: Buffer;
  /** log: the finished exchange */
  readonly summary?: ExchangeSummary;
  /** set by `kong.response.exit` / `ngx.exit`: the answer that ends the request */
  exit: PluginResponse | null;
  /** `ngx.say` / `ngx.print` output so far */
  said: string[];
  /** `ngx.status` as a snippet set it (0: not set) */
  status: number;
}

export function newExchange(ctx: PluginContext, phase: PdkPhase, plugin: string, logger: PluginLogger, extra: Partial<PdkExchange> = {}): PdkExchange {
  return { ctx, phase, plugin, logger, requestBody: null, exit: null, said: [], status: 0, ...extra };
}

/** The messages Kong's error handler gives a status answered without a body (kong/error_handlers.lua). */
const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  411: 'Length required',
  412: 'Precondition failed',
  413: 'Payload too large',
  414: 'URI too long',
  417: 'Expectation failed',
  494: 'Request header or cookie too large',
  500: 'An unexpected error occurred',
  502: 'An invalid response was received from the upstream server',
  503: 'The upstream server is currently unavailable',
  504: 'The upstream server is timing out',
};

export function defaultMessage(status: number): string {
  return DEFAULT_MESSAGES[status] ?? `The upstream server responded with ${status}`;
}
