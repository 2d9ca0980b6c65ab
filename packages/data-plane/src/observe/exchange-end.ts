import type { ServerResponse } from 'node:http';
import type { ExchangeSummary } from '@gatehouse/plugins';
import type { ChainStep } from '../compile/types';
import type { Exchange } from '../pipeline/exchange';
import type { ChainLogger } from '../pipeline/run-chain';
import type { AccessLog } from './access-log';
import type { ExchangeTrace } from './exchange-trace';
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

/**
 * The end of every exchange: once the response is done (or the client went away), the access log gets its line and
 * the route's `log` plugins their summary. Nothing is registered for a request nobody observes.
 */
export class ExchangeObserver {
  constructor(
    private readonly accessLog: AccessLog | null,
    private readonly log: ChainLogger,
  ) {}

  watch(trace: ExchangeTrace, res: ServerResponse, ex: Exchange | null, path: string, rawQuery: string): void {
    const steps = ex !== null ? ex.compiledRoute.logChain : null;
    if (this.accessLog === null && (steps === null || steps.length === 0)) return;
    // 'close' comes once per response
    res.on('close', () => {
      try {
        const summary = summarize(trace, res, ex, path, rawQuery);
        if (ex !== null && steps !== null && steps.length > 0) runLogHooks(ex, steps, summary, this.log);
        this.accessLog?.write(summary);
      } catch (err) {
        this.log.error('end of exchange failed', { error: err instanceof Error ? err.message : String(err) });
      }
    });
  }
}
