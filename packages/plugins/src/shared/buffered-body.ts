import { RequestRefused, type PluginResponse, type PluginRuntime } from '../contract';

/**
 * The most a data plane buffers of one body when a plugin needs it whole (transformers, caches): 8 MiB. The one place
 * this default lives; a data plane may set `runtime.maxBufferedBody` (the GATEHOUSE_MAX_BUFFERED_BODY setting).
 */
export const MAX_BUFFERED_BODY_BYTES = 8 * 1024 * 1024;

export function maxBufferedBody(runtime: PluginRuntime): number {
  return runtime.maxBufferedBody ?? MAX_BUFFERED_BODY_BYTES;
}

/** Kong's answer to a body past a size limit. */
export const REQUEST_TOO_LARGE: PluginResponse = Object.freeze({ status: 413, body: Object.freeze({ message: 'Request size limit exceeded' }) });

export function requestTooLarge(): RequestRefused {
  return new RequestRefused(REQUEST_TOO_LARGE);
}
