import type { PluginContext, PluginResponse } from '../contract';
import { perConfig } from '../shared/per-config';
import { AddressSet } from './address-trie';
import type { IpRestrictionConfig } from './schema';

interface IpRules {
  allow: AddressSet | null;
  deny: AddressSet | null;
  /** the configured refusal; null: Kong's default, which names the client's address */
  refusal: PluginResponse | null;
  status: number;
}

/** Kong 3.x's answer when a configuration says neither: 403 `IP address not allowed: <client address>`. */
export const DEFAULT_STATUS = 403;
export const DEFAULT_MESSAGE = 'IP address not allowed';

/** Both lists compiled to tries once per config (so once per snapshot). */
export const rulesOf = perConfig((config: IpRestrictionConfig): IpRules => {
  const status = config.status ?? DEFAULT_STATUS;
  return {
    allow: config.allow !== null && config.allow.length > 0 ? new AddressSet(config.allow) : null,
    deny: config.deny !== null && config.deny.length > 0 ? new AddressSet(config.deny) : null,
    refusal: config.message !== null ? { status, body: { message: config.message } } : null,
    status,
  };
});

function refuse(rules: IpRules, ip: string): PluginResponse {
  return rules.refusal ?? { status: rules.status, body: { message: `${DEFAULT_MESSAGE}: ${ip}` } };
}

/**
 * Kong's order: an address on the deny list is refused; with an allow list, an address not on it is refused too
 * (deny wins when an address is on both). The client IP is the data plane's (trusted proxies applied).
 */
export function ipRestrictionAccess(ctx: PluginContext, config: IpRestrictionConfig): PluginResponse | void {
  const rules = rulesOf(config);
  const ip = ctx.req.clientIp;
  if (rules.deny !== null && rules.deny.has(ip)) return refuse(rules, ip);
  if (rules.allow !== null && !rules.allow.has(ip)) return refuse(rules, ip);
}
