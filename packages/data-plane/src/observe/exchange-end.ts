import type { ServerResponse } from 'node:http';
import type { ExchangeSummary } from '@gatehouse/plugins';
import type { ChainStep } from '../compile/types';
import type { Exchange } from '../pipeline/exchange';
import type { ChainLogger } from '../pipeline/run-chain';
import type { AccessLog } from './access-log';
import type { ExchangeEnd, ExchangeTrace } from './exchange-trace';
import { summarize } from './summary';

/** Runs the `log` hooks of a route's plugins for one finished exchange; failures are logged, never thrown. */
export function runLogHooks(ex: Exchange, steps: readonly ChainStep[], summary: ExchangeSummary, log: ChainLogger): void {
  const https = ex.scheme === 'https';
  for (const step of steps) {
    const scoped = ex.consumer !== null && step.byConsumer !== null ? step.byConsumer.get(ex.consumer.id) : undefined;
    const instance = scoped ?? step.base;
    if (instance === null || !(https ? instance.https : instance.http)) continue;
    ex.index = step.index;
    ex.pluginId = instance.id;
    try {
      const done = step.plugin.log!(ex, instance.config, summary);
      if (done !== undefined) {
        done.catch((err: unknown) =>
          log.error('plugin log phase failed', { plugin_id: instance.id, plugin: instance.name, request_id: summary.requestId, error: err instanceof Error ? err.message : String(err) }),
        );
      }
    } catch (err) {
      log.error('plugin log phase failed', { plugin_id: instance.id, plugin: instance.name, request_id: summary.requestId, error: err instanceof Error ? err.message : String(err) });
    }
  }
}

/** the observed exchange of a response, for the one 'close' listener all responses share */
const OBSERVED = Symbol('observed exchange');

type ObservedResponse = ServerResponse & { [OBSERVED]: ObservedExchange };

/** 'close' of an observed response (`this`): one function for all, nothing made per request to listen */
function responseClosed(this: ObservedResponse): void {
  this[OBSERVED].closed();
}

/** One observed exchange, from the moment it is routed (or refused) to its response's 'close'. */
class ObservedExchange implements ExchangeEnd {
  relay: ExchangeEnd['relay'] = null;

  constructor(
    private readonly observer: ExchangeObserver,
    private readonly trace: ExchangeTrace,
    private readonly res: ServerResponse,
    private readonly ex: Exchange | null,
    private readonly path: string,
    private readonly rawQuery: string,
  ) {}

  closed(): void {
    this.observer.ended(this.trace, this.res, this.ex, this.path, this.rawQuery);
    this.relay?.responseClosed();
  }
}

/**
 * The end of every exchange: once the response is done (or the client went away), the access log gets its line and
 * the route's `log` plugins their summary. Nothing is registered for a request nobody observes; an observed one has
 * one 'close' listener, which also tells the relay of a proxied response (it does not listen on its own then).
 */
export class ExchangeObserver {
  constructor(
    private readonly accessLog: AccessLog | null,
    private readonly log: ChainLogger,
  ) {}

  watch(trace: ExchangeTrace, res: ServerResponse, ex: Exchange | null, path: string, rawQuery: string): void {
    if (this.accessLog === null && (ex === null || ex.compiledRoute.logChain.length === 0)) return;
    const observed = new ObservedExchange(this, trace, res, ex, path, rawQuery);
    trace.end = observed;
    (res as ObservedResponse)[OBSERVED] = observed;
    // 'close' comes once per response
    res.on('close', responseClosed);
  }

  /** the response of an observed exchange closed */
  ended(trace: ExchangeTrace, res: ServerResponse, ex: Exchange | null, path: string, rawQuery: string): void {
    try {
      const summary = summarize(trace, res, ex, path, rawQuery);
      if (ex !== null && ex.compiledRoute.logChain.length > 0) runLogHooks(ex, ex.compiledRoute.logChain, summary, this.log);
      this.accessLog?.write(summary);
    } catch (err) {
      this.log.error('end of exchange failed', { error: err instanceof Error ? err.message : String(err) });
    }
  }
}
