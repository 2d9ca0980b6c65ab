import { definePlugin, type PluginContext, type PluginDefinition, type PluginResponse } from '../contract';
import { aiError, readAiRequest } from './llm-request';
import type { JsonObject } from './providers';

type AiPluginSpec<Config> = Omit<PluginDefinition<Config, unknown>, 'version' | 'auth' | 'noConsumer'> & { noConsumer?: boolean };

/** A Kong 3.9 AI plugin: not an authentication plugin, scoped to consumers unless it says otherwise. */
export function defineAiPlugin<Config>(spec: AiPluginSpec<Config>): PluginDefinition<Config, unknown> {
  return definePlugin<Config, unknown>({ version: '3.9.0', auth: false, noConsumer: false, ...spec });
}

/**
 * The access phase of an AI plugin that works on the LLM request body (the prompt plugins): the body is read once as
 * JSON (shared with the other AI plugins of the request, at most `max_request_body_size`), a body that is not JSON is
 * answered 400 as Kong does, and `handle` gets the parsed request.
 */
export function onAiRequest<Config extends { max_request_body_size: number }>(
  handle: (ctx: PluginContext, config: Config, request: JsonObject) => PluginResponse | void | Promise<PluginResponse | void>,
): (ctx: PluginContext, config: Config) => Promise<PluginResponse | void> {
  return async (ctx, config) => {
    const request = await readAiRequest(ctx, config.max_request_body_size);
    if (request === null) return aiError(400, 'this LLM route only supports application/json requests');
    return handle(ctx, config, request);
  };
}
