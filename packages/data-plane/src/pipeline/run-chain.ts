import type { Consumer } from '@gatehouse/core';
import { RequestRefused, type AuthResult, type CredentialRef, type PluginContext, type PluginDefinition, type PluginResponse } from '@gatehouse/plugins';
import type { ChainStep, ConsumerDirectory, PluginInstance } from '../compile/types';
import { pluginSpan } from '../observe/request-spans';

/**
 * The one place that combines authentication plugins (the interface document's rules; Kong's algorithm, kong-reference
 * 2.1/2.2). Plugins run by priority, highest first. For an authentication plugin:
 *   1. OPTIONS and `run_on_preflight: false` → the plugin does nothing.
 *   2. `config.anonymous` set and a credential already set by an earlier plugin → skipped (logical OR).
 *   3. Otherwise it tries to authenticate:
 *      success → consumer + credential set, anonymous cleared;
 *      failure, `config.anonymous` set → the anonymous consumer (by id, then by username) with no credential and the
 *        anonymous flag; a consumer that does not exist → 500 "An unexpected error occurred";
 *      failure, no `config.anonymous` → the plugin's own refusal is the response (logical AND);
 *      nothing to go on and nothing to refuse (a session plugin without a session) → as if the plugin were absent.
 * Every other plugin runs with its configuration resolved for the consumer chosen so far, so a request-termination
 * scoped to the anonymous consumer blocks exactly the anonymous requests.
 *
 * Mixed configurations follow from the same steps: a plugin without `anonymous` always demands its credential,
 * whatever ran before it; a plugin with `anonymous` only runs while no earlier plugin has authenticated the request,
 * and falls back instead of refusing. What reaches the upstream is the state left by the last plugin that
 * authenticated or fell back.
 *
 * An authentication plugin's own endpoints (oauth2 `/oauth2/token`) are served once every other authentication plugin
 * has run (rule 4: under AND the others must authenticate those requests too).
 *
 * A plugin hook may return a Promise; the chain only goes asynchronous at that step, so synchronous plugins never
 * pay for the asynchronous ones.
 */

/** The per-request context as run-chain needs it: the plugin context plus the slots authentication fills. */
export interface ChainState extends PluginContext {
  consumer: Consumer | null;
  credential: CredentialRef | null;
  anonymous: boolean;
  index: unknown;
  pluginId?: string;
  /** the configurations with a response hook that ran on this request, in order; null while there are none */
  responseSteps: ResponseStep[] | null;
}

/** A plugin configuration whose response hook will see the upstream's response. */
export interface ResponseStep {
  plugin: PluginDefinition;
  instance: PluginInstance;
  index: unknown;
}

export interface ChainLogger {
  error(message: string, detail?: Record<string, unknown>): void;
}

/** null: proceed to the upstream; otherwise the response to send. */
export type ChainOutcome = PluginResponse | null;

export const UNEXPECTED_ERROR: PluginResponse = Object.freeze({ status: 500, body: Object.freeze({ message: 'An unexpected error occurred' }) });

function isThenable<T>(value: unknown): value is PromiseLike<T> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

function failed(log: ChainLogger, instance: PluginInstance, err: unknown): PluginResponse {
  // a refusal raised while reading or streaming the body (413 past GATEHOUSE_MAX_BUFFERED_BODY, whichever plugin was
  // reading; request-size-limiting) is the client's answer, not a fault
  if (err instanceof RequestRefused) return err.response;
  log.error('plugin failed', { plugin_id: instance.id, plugin: instance.name, error: err instanceof Error ? err.message : String(err) });
  return UNEXPECTED_ERROR;
}

function anonymousOf(config: { anonymous?: unknown }): string | null {
  const anonymous = config.anonymous;
  return typeof anonymous === 'string' && anonymous !== '' ? anonymous : null;
}

/** Applies one authentication outcome; returns the response that ends the request, or null to go on. */
function settle(
  state: ChainState,
  result: AuthResult | null,
  instance: PluginInstance,
  anonymous: string | null,
  consumers: ConsumerDirectory,
  log: ChainLogger,
): ChainOutcome {
  // nothing to go on and nothing to refuse (a session plugin without a session): as if the plugin were absent
  if (result === null) return null;
  if (typeof result !== 'object') return failed(log, instance, new Error('authenticate returned no outcome'));
  if (result.ok) {
    state.consumer = result.consumer;
    state.credential = result.credential;
    state.anonymous = false;
    return null;
  }
  if (anonymous === null) return result.response;
  const consumer = consumers.byId.get(anonymous) ?? consumers.byUsername.get(anonymous);
  if (consumer === undefined) {
    log.error('anonymous consumer not found', { plugin_id: instance.id, plugin: instance.name, anonymous });
    return UNEXPECTED_ERROR;
  }
  state.consumer = consumer;
  state.credential = null;
  state.anonymous = true;
  return null;
}

/** An auth plugin's own endpoint (oauth2 token/authorize) waiting for the other authentication plugins. */
interface PendingEndpoint {
  step: ChainStep;
  instance: PluginInstance;
}

function authRemains(chain: readonly ChainStep[], from: number): boolean {
  for (let i = from; i < chain.length; i++) if (chain[i]!.plugin.auth && chain[i]!.base !== null) return true;
  return false;
}

function serveEndpoint(state: ChainState, pending: PendingEndpoint, log: ChainLogger): ChainOutcome | Promise<ChainOutcome> {
  state.index = pending.step.index;
  state.pluginId = pending.instance.id;
  try {
    const served = pending.step.plugin.endpoint!.serve(state, pending.instance.config);
    return isThenable<PluginResponse>(served) ? Promise.resolve(served).then(undefined, (err) => failed(log, pending.instance, err)) : served;
  } catch (err) {
    return failed(log, pending.instance, err);
  }
}

/**
 * One configuration's `access` or `rewrite` hook, inside its `kong.<phase>.plugin.<name>` span: what the hook returned
 * (a response ends the request, a promise is settled by the caller), or the gateway's 500 when it threw.
 */
function runHook(state: ChainState, step: ChainStep, instance: PluginInstance, phase: 'access' | 'rewrite', log: ChainLogger): PluginResponse | void | Promise<PluginResponse | void> {
  state.index = step.index;
  state.pluginId = instance.id;
  let result: PluginResponse | void | Promise<PluginResponse | void>;
  const span = pluginSpan(state.spans, phase === 'access' ? 'plugin_access' : 'plugin_rewrite', instance.name);
  try {
    result = step.plugin[phase]!(state, instance.config);
  } catch (err) {
    return failed(log, instance, err);
  } finally {
    if (span !== null) state.spans!.endWhen(span, result!);
  }
  return result;
}

/** A hook's promise: its response ends the request (a rejection is the gateway's 500); nothing goes on with `rest`. */
function settleThen(pending: PromiseLike<PluginResponse | void>, instance: PluginInstance, log: ChainLogger, rest: () => ChainOutcome | Promise<ChainOutcome>): Promise<ChainOutcome> {
  return Promise.resolve(pending).then(
    (response) => response ?? rest(),
    (err) => failed(log, instance, err),
  );
}

function runFrom(
  state: ChainState,
  chain: readonly ChainStep[],
  consumers: ConsumerDirectory,
  log: ChainLogger,
  from: number,
  pending: PendingEndpoint | null,
): ChainOutcome | Promise<ChainOutcome> {
  const https = state.req.scheme === 'https';
  for (let i = from; i < chain.length; i++) {
    if (pending !== null && !authRemains(chain, i)) return serveEndpoint(state, pending, log);
    const step = chain[i]!;
    const { plugin } = step;

    if (step.rewrite) {
      const instance = step.base!;
      if (!(https ? instance.https : instance.http)) continue;
      const result = runHook(state, step, instance, 'rewrite', log);
      if (isThenable<PluginResponse | void>(result)) return settleThen(result, instance, log, () => runFrom(state, chain, consumers, log, i + 1, pending));
      if (result) return result;
      continue;
    }

    if (plugin.auth) {
      const instance = step.base;
      if (instance === null || !(https ? instance.https : instance.http)) continue;
      const config = instance.config;
      // an authentication plugin with a response hook (session) sees the response whatever it decided
      if (plugin.response !== undefined) (state.responseSteps ??= []).push({ plugin, instance, index: step.index });
      if (config.run_on_preflight === false && state.req.method === 'OPTIONS') continue;
      if (plugin.endpoint !== undefined && pending === null) {
        state.index = step.index;
        state.pluginId = instance.id;
        if (plugin.endpoint.matches(state, config)) {
          pending = { step, instance };
          continue;
        }
      }
      const anonymous = anonymousOf(config);
      if (anonymous !== null && state.credential !== null) continue;
      if (plugin.authenticate === undefined) continue;
      state.index = step.index;
      state.pluginId = instance.id;
      let result: AuthResult | null | Promise<AuthResult | null>;
      const span = pluginSpan(state.spans, 'plugin_access', instance.name);
      try {
        result = plugin.authenticate(state, config);
      } catch (err) {
        return failed(log, instance, err);
      } finally {
        if (span !== null) state.spans!.endWhen(span, result!);
      }
      if (isThenable<AuthResult | null>(result)) {
        const next = i + 1;
        const waiting = pending;
        return Promise.resolve(result).then(
          (settled) => settle(state, settled, instance, anonymous, consumers, log) ?? runFrom(state, chain, consumers, log, next, waiting),
          (err) => failed(log, instance, err),
        );
      }
      const stop = settle(state, result, instance, anonymous, consumers, log);
      if (stop !== null) return stop;
      continue;
    }

    const scoped = state.consumer !== null && step.byConsumer !== null ? step.byConsumer.get(state.consumer.id) : undefined;
    const instance = scoped ?? step.base;
    if (instance === null || !(https ? instance.https : instance.http)) continue;
    if (plugin.response !== undefined) (state.responseSteps ??= []).push({ plugin, instance, index: step.index });
    if (plugin.access === undefined) continue;
    const result = runHook(state, step, instance, 'access', log);
    if (isThenable<PluginResponse | void>(result)) {
      const next = i + 1;
      const waiting = pending;
      return settleThen(result, instance, log, () => runFrom(state, chain, consumers, log, next, waiting));
    }
    if (result) return result;
  }
  return pending !== null ? serveEndpoint(state, pending, log) : null;
}

/** Runs a route's plugins for one request. Synchronous unless a plugin answered with a Promise. */
export function runChain(state: ChainState, chain: readonly ChainStep[], consumers: ConsumerDirectory, log: ChainLogger): ChainOutcome | Promise<ChainOutcome> {
  return runFrom(state, chain, consumers, log, 0, null);
}
