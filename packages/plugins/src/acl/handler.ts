import type { PluginContext, PluginResponse } from '../contract';
import type { AclIndex, ConsumerGroups } from './group-index';
import type { AclConfig } from './schema';
import { perConfig } from '../shared/per-config';

const UNAUTHORIZED: PluginResponse = Object.freeze({ status: 401, body: Object.freeze({ message: 'Unauthorized' }) });
const FORBIDDEN: PluginResponse = Object.freeze({ status: 403, body: Object.freeze({ message: 'You cannot consume this service' }) });
const GROUPS_HEADER = 'x-consumer-groups';

interface PreparedConfig {
  deny: boolean;
  listed: ReadonlySet<string>;
}

const prepare = perConfig((config: AclConfig): PreparedConfig => {
  const deny = (config.deny?.length ?? 0) > 0;
  const prepared: PreparedConfig = { deny, listed: new Set(deny ? config.deny : (config.allow ?? [])) };
  return prepared;
});

function inListedGroup(groups: ConsumerGroups, listed: ReadonlySet<string>): boolean {
  for (const group of groups.groups) if (listed.has(group)) return true;
  return false;
}

/**
 * Allows or refuses the consumer that authentication chose (the anonymous one included) by its groups.
 * Nobody identified: 401, or 403 when a credential without consumer was accepted (ldap-auth). A consumer without
 * groups passes a deny list (with an empty `x-consumer-groups`, as in Kong) and fails an allow list (401 without a
 * credential, as for the anonymous consumer; 403 with one). Allowed requests carry `x-consumer-groups` unless hide_groups_header; the client's own copy of that
 * header never reaches the upstream. Groups only come from ACL entities here, so always_use_authenticated_groups
 * changes nothing.
 */
export function aclAccess(ctx: PluginContext<AclIndex>, config: AclConfig): PluginResponse | void {
  const consumer = ctx.consumer;
  if (consumer === null) return ctx.credential !== null ? FORBIDDEN : UNAUTHORIZED;
  const { deny, listed } = prepare(config);
  const groups = ctx.index.byConsumer.get(consumer.id);
  if (groups === undefined) {
    if (!deny) return ctx.credential !== null ? FORBIDDEN : UNAUTHORIZED;
    // Kong passes a deny list with an empty group list, and so sends the header empty
    if (config.hide_groups_header) ctx.upstream.removeHeader(GROUPS_HEADER);
    else ctx.upstream.setHeader(GROUPS_HEADER, '');
    return;
  }
  if (inListedGroup(groups, listed) === deny) return FORBIDDEN;
  if (config.hide_groups_header) ctx.upstream.removeHeader(GROUPS_HEADER);
  else ctx.upstream.setHeader(GROUPS_HEADER, groups.header);
}
