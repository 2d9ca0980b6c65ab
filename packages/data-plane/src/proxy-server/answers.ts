import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PluginResponse } from '@gatehouse/plugins';
import type { ExchangeObserver } from '../observe/exchange-end';
import { stampGatewayResponse, stampStoredResponse, type ExchangeTrace } from '../observe/exchange-trace';
import type { Exchange } from '../pipeline/exchange';
import type { ChainLogger } from '../pipeline/run-chain';
import { ProxyErrors, sendFixed, sendPluginResponse, type FixedResponse } from '../proxy/responses';

// The answers a request can end with short of the upstream's: the gateway's fixed ones (a refusal at admission, no
// service), a plugin's, and the gateway's 500 after a failure.

/** Headers plugins set for the client's response; the response's own headers win over them. */
export function applyResponseHeaders(res: ServerResponse, ex: Exchange): void {
  const extra = ex.responseHeaders;
  if (extra !== null) for (const [name, value] of extra) res.setHeader(name, value);
}

/** The path of a request the router refused (for its log line). */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Admission refused the request (bad target, no route, wrong scheme): the gateway's own answer, logged. */
export function answerRefusal(observer: ExchangeObserver, req: IncomingMessage, res: ServerResponse, refusal: FixedResponse, trace: ExchangeTrace): void {
  observer.watch(trace, res, null, pathOf(req), '');
  stampGatewayResponse(res, trace);
  sendFixed(res, refusal);
}

/** The route has no service: 503 with the plugins' headers. */
export function answerNoService(res: ServerResponse, ex: Exchange): void {
  applyResponseHeaders(res, ex);
  stampGatewayResponse(res, ex.trace);
  sendFixed(res, ProxyErrors.noService);
}

/** The service's upstream has no target to send to. */
export function answerNoPeer(res: ServerResponse, ex: Exchange): void {
  applyResponseHeaders(res, ex);
  sendFixed(res, ProxyErrors.noHealthyTarget);
}

/** A plugin answered (auth refusal, termination, a cached response): its answer, with the plugins' headers. */
export function answerPlugin(res: ServerResponse, ex: Exchange, response: PluginResponse): void {
  applyResponseHeaders(res, ex);
  if (response.proxied === true) stampStoredResponse(res, ex.trace);
  else stampGatewayResponse(res, ex.trace);
  sendPluginResponse(res, response);
}

/** the gateway's own answer after a failure: stamped like any response it makes, with the plugins' headers once they ran */
export function answerUnexpected(res: ServerResponse, trace: ExchangeTrace, ex: Exchange | null = null): void {
  if (ex !== null && !res.headersSent) applyResponseHeaders(res, ex);
  stampGatewayResponse(res, trace);
  sendFixed(res, ProxyErrors.unexpected);
}

/** Logs a failure of the walk, with the request id when the request has one. */
export function reportFailure(log: ChainLogger, what: string, err: unknown, trace?: ExchangeTrace): void {
  log.error(what, { error: err instanceof Error ? err.message : String(err), ...(trace ? { request_id: trace.requestId } : {}) });
}
