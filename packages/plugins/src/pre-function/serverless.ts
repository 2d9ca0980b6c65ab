import type { SnapshotConfig } from '@gatehouse/core';
import { definePlugin, type PluginContext, type PluginDefinition, type PluginLogger, type PluginResponse, type UpstreamResponse } from '../contract';
import { newExchange, type PdkExchange, type PdkPhase } from '../pdk/exchange';
import { luaSandbox } from '../pdk/lua/sandbox';
import { perConfig } from '../shared/per-config';
import { checkServerlessConfig, SERVERLESS_PHASES, serverlessConfigSchema, type ServerlessConfig } from './schema';

/**
 * Kong's pre-function and post-function (`_handler.lua`): each phase runs its snippets in order in the Lua sandbox.
 * Snippets compile when the snapshot is compiled (and once per text); a snippet that returns a function has that
 * function run from then on. An error ends the request with 500 and a log line naming the plugin and the error
 * (`unsupported function: kong.cache` for what the PDK subset does not have). As in Kong, `rewrite` snippets run only
 * for the global configuration (before the route's plugins), the others for the configuration the request resolves
 * to. The certificate phase is accepted and not run (the TLS handshake has no PDK here).
 */

const BODY_READERS = /get_raw_body|get_body|read_body|get_body_data/;

const STDERR_LOG: PluginLogger = { error: (message, detail) => process.stderr.write(`${JSON.stringify({ level: 'error', message, ...detail })}\n`) };

/** what a configuration's rewrite and access snippets need, worked out once per configuration rather than per request */
const requestPlan = perConfig((config: ServerlessConfig) => ({
  rewriteReadsBody: config.rewrite.some((source) => BODY_READERS.test(source)),
  accessReadsBody: config.access.some((source) => BODY_READERS.test(source)),
}));

function runPhase(name: string, phase: PdkPhase, sources: readonly string[], ex: PdkExchange): PluginResponse | null {
  const sandbox = luaSandbox();
  for (const source of sources) {
    try {
      const answer = sandbox.runSnippet(sandbox.compile(source), ex);
      if (answer !== null) return answer;
    } catch (err) {
      throw new Error(`${name} (${phase}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
  if (ex.said.length > 0) return { status: ex.status || 200, body: ex.said.join(''), headers: { 'content-type': 'text/plain' } };
  return null;
}

/**
 * The `rewrite` or `access` snippets on the request (the body read first when one of them reads it). Rewrite runs
 * as Kong's rewrite phase: for the global configuration only, before the route's plugins (see the contract's `rewrite`).
 */
function requestPhase(name: string, phase: 'rewrite' | 'access', ctx: PluginContext, config: ServerlessConfig): PluginResponse | void | Promise<PluginResponse | void> {
  const sources = config[phase];
  if (sources.length === 0) return;
  const log = ctx.runtime.log ?? STDERR_LOG;
  const run = (body: Buffer | null): PluginResponse | void => runPhase(name, phase, sources, newExchange(ctx, phase, name, log, { requestBody: body })) ?? undefined;
  const plan = requestPlan(config);
  return (phase === 'rewrite' ? plan.rewriteReadsBody : plan.accessReadsBody) ? ctx.req.readBody().then(run) : run(null);
}

function responsePhases(name: string, ctx: PluginContext, config: ServerlessConfig, res: UpstreamResponse): void {
  const log = ctx.runtime.log ?? STDERR_LOG;
  if (config.header_filter.length > 0) runPhase(name, 'header_filter', config.header_filter, newExchange(ctx, 'header_filter', name, log, { response: res }));
  if (config.body_filter.length === 0) return;
  res.transformBody((body) => {
    const ex = newExchange(ctx, 'body_filter', name, log, { response: res, responseBody: body });
    try {
      runPhase(name, 'body_filter', config.body_filter, ex);
    } catch (err) {
      log.error('plugin failed', { plugin: name, error: err instanceof Error ? err.message : String(err) });
    }
    return ex.replacedResponseBody ?? body;
  });
}

/** Compiles every snippet of this plugin's configurations in the snapshot, so no request pays for it. */
function precompile(name: string, snapshot: SnapshotConfig): null {
  const sandbox = luaSandbox();
  for (const row of snapshot.plugins) {
    if (row.name !== name) continue;
    const config = (row.config ?? {}) as Record<string, unknown>;
    for (const phase of SERVERLESS_PHASES) {
      const list = config[phase];
      if (!Array.isArray(list)) continue;
      for (const source of list) if (typeof source === 'string') sandbox.syntaxError(source);
    }
  }
  return null;
}

export function serverlessPlugin(name: 'pre-function' | 'post-function', priority: number): PluginDefinition<ServerlessConfig, null> {
  return definePlugin<ServerlessConfig, null>({
    name,
    priority,
    version: '3.9.1',
    configSchema: serverlessConfigSchema(name),
    auth: false,
    noConsumer: true,
    checkConfig: checkServerlessConfig,
    compile: (snapshot) => precompile(name, snapshot),
    indexSections: ['plugins'],
    rewrite: (ctx, config) => requestPhase(name, 'rewrite', ctx, config),
    access: (ctx, config) => requestPhase(name, 'access', ctx, config),
    response: (ctx, config, res) => responsePhases(name, ctx, config, res),
    log: (ctx, config, summary) => {
      if (config.log.length === 0) return;
      runPhase(name, 'log', config.log, newExchange(ctx, 'log', name, ctx.runtime.log ?? STDERR_LOG, { summary }));
    },
  });
}
