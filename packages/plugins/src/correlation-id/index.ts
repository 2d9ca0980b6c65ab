import { definePlugin } from '../contract';
import { generateCorrelationId } from './generators';
import { correlationIdConfigSchema, type CorrelationIdConfig } from './schema';

/**
 * Kong's correlation-id: a request that already carries `header_name` keeps its value; any other gets a new id from
 * `generator`. The id goes upstream in that header, into the log plugins' entries as `correlation_id` and, with
 * `echo_downstream`, back to the client, on the gateway's own answers (a 502) too.
 */
export const correlationId = definePlugin<CorrelationIdConfig, unknown>({
  name: 'correlation-id',
  priority: 100001,
  version: '3.9.0',
  configSchema: correlationIdConfigSchema,
  auth: false,
  noConsumer: false,
  access: (ctx, config) => {
    const sent = ctx.req.headers[config.header_name.toLowerCase()];
    const existing = Array.isArray(sent) ? sent[0] : sent;
    const id = existing !== undefined && existing !== '' ? existing : generateCorrelationId(config.generator, ctx.req.connection);
    if (id !== existing) ctx.upstream.setHeader(config.header_name, id);
    ctx.logValues?.set('correlation_id', id);
    if (config.echo_downstream) ctx.response?.setHeader(config.header_name, id);
  },
});
