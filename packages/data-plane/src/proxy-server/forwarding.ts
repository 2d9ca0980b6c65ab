import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UpstreamResponse } from '@gatehouse/plugins';
import type { UpstreamTarget } from '../compile/types';
import { BalancedRequest } from '../balancer/balanced-request';
import { hashKeyOf } from '../balancer/hash-key';
import { traceDnsQuery, tracesDnsQuery } from '../observe/dns-spans';
import { pluginSpan } from '../observe/request-spans';
import type { Exchange } from '../pipeline/exchange';
import type { ChainLogger } from '../pipeline/run-chain';
import type { Forwarder } from '../proxy/forwarder';
import { bufferRequestBody } from '../proxy/request-buffering';
import { ProxyErrors, sendFixed } from '../proxy/responses';
import { buildUpstreamRequest, type ResponseInterceptor, type UpstreamRequest } from '../proxy/upstream-request';
import { answerNoPeer, answerNoService, reportFailure } from './answers';
import type { ProxyPipeline } from './proxy-pipeline';

// Forwarding, the stage after the plugins let a request through: its body buffered when the route asks, an address
// picked when the service names an upstream, the plugins' response hooks attached, and the request handed to the
// gRPC forwarder or the HTTP one.

/** Kong's request_buffering: the client's body is read whole first (not for gRPC, whose messages stream) */
export function forward(p: ProxyPipeline, req: IncomingMessage, res: ServerResponse, ex: Exchange): void {
  const buffering = ex.compiledRoute.requestBuffering && !ex.compiledRoute.grpc ? bufferRequestBody(ex, p.bodyLimit) : null;
  if (buffering === null) return send(p, req, res, ex);
  buffering
    .then(() => send(p, req, res, ex))
    .catch((err: unknown) => {
      reportFailure(p.log, 'request failed', err);
      if (!res.headersSent) sendFixed(res, ProxyErrors.unexpected);
    });
}

/** The request goes to the service's address, or to an address of its upstream. */
function send(p: ProxyPipeline, req: IncomingMessage, res: ServerResponse, ex: Exchange): void {
  const target = ex.compiledRoute.upstream;
  if (target === null) return answerNoService(res, ex);
  const hooks = ex.responseSteps === null ? null : responseHooksOf(p.log, ex);
  const via = ex.compiledRoute.grpc || ex.compiledRoute.grpcUpstream ? p.grpcForwarder : p.forwarder;
  if (target.balancer !== null) return forwardBalanced(p, req, res, ex, target, hooks, via);
  const upstream = buildUpstreamRequest(ex, target, false, hooks);
  const spans = ex.spans;
  if (tracesDnsQuery(spans, target.host)) {
    const go = () => forwardTo(req, res, ex, upstream, via);
    if (traceDnsQuery(spans, target.host, target.port, go)) return;
  }
  forwardTo(req, res, ex, upstream, via);
}

function forwardTo(req: IncomingMessage, res: ServerResponse, ex: Exchange, upstream: UpstreamRequest, via: Forwarder): void {
  ex.trace?.sent(upstream.path, upstream.target, ex.service?.host);
  via.forward(req, res, upstream);
}

/** The response hooks of the plugins that ran on the exchange, in order; a failing hook is logged and skipped. */
function responseHooksOf(log: ChainLogger, ex: Exchange): ResponseInterceptor {
  return (response: UpstreamResponse) => {
    for (const step of ex.responseSteps!) {
      ex.index = step.index;
      ex.pluginId = step.instance.id;
      const span = pluginSpan(ex.spans, 'plugin_header_filter', step.instance.name);
      try {
        step.plugin.response!(ex, step.instance.config, response);
        if (span !== null) ex.spans!.endWhen(span);
      } catch (err) {
        if (span !== null) ex.spans!.endWhen(span);
        log.error('plugin response hook failed', { plugin_id: step.instance.id, plugin: step.instance.name, error: err instanceof Error ? err.message : String(err) });
      }
    }
  };
}

/** A service whose host names an upstream: pick an address (waiting only for a name's first DNS answer). */
function forwardBalanced(p: ProxyPipeline, req: IncomingMessage, res: ServerResponse, ex: Exchange, service: UpstreamTarget, hooks: ResponseInterceptor | null, via: Forwarder): void {
  const balancers = p.balancers;
  const balancer = balancers.get(service.balancer!);
  if (balancer === undefined) return answerNoPeer(res, ex);
  const key = hashKeyOf(balancer.spec, ex);
  const send = (): boolean => {
    const address = balancer.pick(key, null);
    if (address === null) return false;
    const attempt = new BalancedRequest(balancers, balancer, address, ex, service, key, ex.service?.retries ?? 5, hooks);
    const upstream = attempt.request();
    ex.trace?.sent(upstream.path, upstream.target, ex.service?.host);
    via.forward(req, res, upstream, attempt);
    return true;
  };
  if (send()) return;
  const pending = balancer.pending;
  if (pending.length === 0) return answerNoPeer(res, ex);
  Promise.all(pending).then(
    () => {
      if (!send()) answerNoPeer(res, ex);
    },
    () => answerNoPeer(res, ex),
  );
}
