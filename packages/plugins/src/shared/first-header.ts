import type { PluginRequest } from '../contract';

/**
 * The first value of a header as the client sent it, as Kong's `kong.request.get_header` reads it; Node joins
 * repeated custom headers with ", ", and the raw header list tells one value with a comma from two headers.
 */
export function firstHeaderValue(req: PluginRequest, name: string): string | undefined {
  const value = req.headers[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value[0];
  if (req.rawHeaders && value.includes(',')) {
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === name) return req.rawHeaders[i + 1];
  }
  return value;
}
