import type { PluginContext, PluginResponse } from '../../contract';

/** A `.proto` file that cannot be read or parsed: logged, and the client gets Kong's answer to a failed handler. */
export function protoFailure(ctx: PluginContext, plugin: string, proto: string, err: unknown): PluginResponse {
  ctx.runtime.log?.error(`${plugin}: the .proto file could not be loaded`, { proto, reason: err instanceof Error ? err.message : String(err) });
  return { status: 500, body: { message: 'An unexpected error occurred' } };
}
