/**
 * Which headers the gateway adds (Kong's `headers` setting): `server_tokens` = `Via` on proxied responses and `Server`
 * on the gateway's own; `latency_tokens` = `X-Kong-Proxy-Latency`, `X-Kong-Upstream-Latency`,
 * `X-Kong-Response-Latency`; or single header names; `off` for none.
 */
export interface GatewayHeaders {
  via: boolean;
  server: boolean;
  proxyLatency: boolean;
  upstreamLatency: boolean;
  responseLatency: boolean;
  /** `X-Kong-Request-Id` on responses */
  requestId: boolean;
  /** `X-Kong-Upstream-Status`: the upstream's own status on proxied responses (not in Kong's default set) */
  upstreamStatus: boolean;
  /** `X-Kong-Request-Id` on upstream requests (Kong's `headers_upstream`); absent: on */
  upstreamRequestId?: boolean;
  /** `gatehouse/<version>`, the token of `Via` and `Server` */
  serverToken: string;
}

/** Kong's default: `server_tokens, latency_tokens, X-Kong-Request-Id`. */
export const DEFAULT_HEADERS_SETTING = 'server_tokens, latency_tokens, X-Kong-Request-Id';

const NAMES: Record<string, Array<keyof Omit<GatewayHeaders, 'serverToken'>>> = {
  server_tokens: ['via', 'server'],
  latency_tokens: ['proxyLatency', 'upstreamLatency', 'responseLatency'],
  via: ['via'],
  server: ['server'],
  'x-kong-proxy-latency': ['proxyLatency'],
  'x-kong-upstream-latency': ['upstreamLatency'],
  'x-kong-response-latency': ['responseLatency'],
  'x-kong-request-id': ['requestId'],
  'x-kong-upstream-status': ['upstreamStatus'],
};

/** Headers Kong accepts in the list that Gatehouse does not add (kept valid so a Kong setting carries over). */
const ACCEPTED_UNUSED = new Set(['x-kong-admin-latency']);

/** Parses the setting; throws with the offending name for anything Kong would refuse. */
export function parseGatewayHeaders(setting: string, serverToken: string): GatewayHeaders {
  const out: GatewayHeaders = { via: false, server: false, proxyLatency: false, upstreamLatency: false, responseLatency: false, requestId: false, upstreamStatus: false, serverToken };
  const items = setting
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 1 && items[0]!.toLowerCase() === 'off') return out;
  for (const item of items) {
    const key = item.toLowerCase();
    if (key === 'off') throw new Error("GATEHOUSE_HEADERS: 'off' cannot be mixed with other values");
    const flags = NAMES[key];
    if (flags === undefined) {
      if (ACCEPTED_UNUSED.has(key)) continue;
      throw new Error(`GATEHOUSE_HEADERS: invalid header name '${item}'`);
    }
    for (const flag of flags) out[flag] = true;
  }
  return out;
}

export function defaultGatewayHeaders(serverToken = 'gatehouse'): GatewayHeaders {
  return parseGatewayHeaders(DEFAULT_HEADERS_SETTING, serverToken);
}

/** Kong's `headers_upstream` (GATEHOUSE_HEADERS_UPSTREAM): `X-Kong-Request-Id` (the default) or `off`; whether the request id goes upstream. */
export function parseHeadersUpstream(setting: string | undefined): boolean {
  const items = (setting ?? 'X-Kong-Request-Id').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const item of items) if (item !== 'off' && item !== 'x-kong-request-id') throw new Error(`GATEHOUSE_HEADERS_UPSTREAM: invalid entry '${item}'`);
  return items.includes('x-kong-request-id');
}
