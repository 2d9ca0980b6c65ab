import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { PluginResponse } from '@gatehouse/plugins';
import type { UpstreamTarget } from '../compile/types';
import { hashKeyOf } from '../balancer/hash-key';
import { ExchangeTrace, stampGatewayHeaders } from '../observe/exchange-trace';
import { Exchange } from '../pipeline/exchange';
import { runChain, type ChainOutcome } from '../pipeline/run-chain';
import { ProxyErrors, renderPluginResponse, sendOnSocket, type FixedResponse } from '../proxy/responses';
import { buildUpstreamRequest } from '../proxy/upstream-request';
import { admit } from './admission';
import { reportFailure } from './answers';
import { isPending } from './plugin-chain';
import type { ProxyPipeline } from './proxy-pipeline';

// Upgrades (WebSocket) take the same admission and plugins as other requests; their answers are written on the raw
// socket, and an upgrade let through is relayed to the upstream by the pipeline's UpgradeRelay.

/** the target an upgrade goes to: the service's, or an address of its upstream; null when none is available */
function upgradeTarget(p: ProxyPipeline, ex: Exchange, service: UpstreamTarget): UpstreamTarget | null {
  if (service.balancer === null) return service;
  const balancer = p.balancers.get(service.balancer);
  const address = balancer?.pick(hashKeyOf(balancer.spec, ex), null) ?? null;
  return address === null ? null : address.forwardTarget(service, balancer!.spec.hostHeader);
}

export function upgrade(p: ProxyPipeline, req: IncomingMessage, socket: Duplex, head: Buffer, scheme: string): void {
  p.stats.total_requests++;
  socket.on('error', () => socket.destroy());
  const trace = new ExchangeTrace(req, p.gatewayHeaders);
  const answerFixed = (r: FixedResponse) => {
    const headers = { ...r.headers };
    stampGatewayHeaders(headers, trace);
    sendOnSocket(socket as Socket, r.status, headers, r.body);
  };
  const answerPlugin = (response: PluginResponse, ex: Exchange) => {
    const rendered = renderPluginResponse(response);
    if (ex.responseHeaders !== null) for (const [name, value] of ex.responseHeaders) rendered.headers[name] ??= value;
    stampGatewayHeaders(rendered.headers, trace);
    sendOnSocket(socket as Socket, rendered.status, rendered.headers, rendered.body);
  };
  const proceed = (ex: Exchange) => {
    const service = ex.compiledRoute.upstream;
    if (service === null) return answerFixed(ProxyErrors.noService);
    const target = upgradeTarget(p, ex, service);
    if (target === null) return answerFixed(ProxyErrors.noHealthyTarget);
    p.upgrades.relay(req, socket, head, buildUpstreamRequest(ex, target, true));
  };
  const settle = (outcome: ChainOutcome, ex: Exchange) => (outcome === null ? proceed(ex) : answerPlugin(outcome, ex));
  try {
    const admitted = admit(p, req, scheme, trace);
    if (!(admitted instanceof Exchange)) return answerFixed(admitted);
    const outcome = runChain(admitted, admitted.compiledRoute.chain, admitted.config.consumers, p.log);
    if (!isPending(outcome)) return settle(outcome, admitted);
    outcome.then(
      (settled) => settle(settled, admitted),
      (err: unknown) => {
        reportFailure(p.log, 'upgrade failed', err, trace);
        answerFixed(ProxyErrors.unexpected);
      },
    );
  } catch (err) {
    reportFailure(p.log, 'upgrade failed', err, trace);
    answerFixed(ProxyErrors.unexpected);
  }
}
