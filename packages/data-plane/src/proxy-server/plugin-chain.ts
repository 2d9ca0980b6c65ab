import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExchangeTrace } from '../observe/exchange-trace';
import type { Exchange } from '../pipeline/exchange';
import { runChain, type ChainOutcome } from '../pipeline/run-chain';
import { answerPlugin, answerUnexpected, reportFailure } from './answers';
import { forward } from './forwarding';
import type { ProxyPipeline } from './proxy-pipeline';

// The plugin chain stage: the route's plugins run on the exchange; null lets the request through to forwarding, a
// plugin response answers it. Plugins that wait (a store, a remote call) make the outcome a promise, settled here.

/** The chain's outcome: null to forward, a plugin's answer, or a promise of either. No plugins: null at once. */
export function runPlugins(p: ProxyPipeline, ex: Exchange): ChainOutcome | PromiseLike<ChainOutcome> {
  const chain = ex.compiledRoute.chain;
  return chain.length === 0 ? null : runChain(ex, chain, ex.config.consumers, p.log);
}

export function isPending(value: unknown): value is PromiseLike<ChainOutcome> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

/** A chain that waited: once it settles, the request is forwarded or answered; a failure gets the gateway's 500. */
export function settleLater(p: ProxyPipeline, req: IncomingMessage, res: ServerResponse, ex: Exchange, pending: PromiseLike<ChainOutcome>, trace: ExchangeTrace): void {
  pending.then(
    (settled) => {
      try {
        if (settled === null) forward(p, req, res, ex);
        else answerPlugin(res, ex, settled);
      } catch (err) {
        reportFailure(p.log, 'request failed', err, trace);
        answerUnexpected(res, trace, ex);
      }
    },
    (err: unknown) => {
      reportFailure(p.log, 'request failed', err, trace);
      answerUnexpected(res, trace, ex);
    },
  );
}
