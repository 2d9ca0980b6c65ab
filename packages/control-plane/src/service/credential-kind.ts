import type { CredentialEntity } from '@gatehouse/plugins';
import type { EntityKind } from './entity-kind';

/** A plugin's credential entity: nested under consumers at its consumerPath, stored after the plugin's prepare. */
export function credentialKind(entity: CredentialEntity): EntityKind {
  return {
    def: entity,
    nestedPaths: { consumers: entity.consumerPath },
    prepare: entity.prepare ? (e, ctx) => entity.prepare!(e, ctx.previous, { transform: ctx.transform }) : undefined,
  };
}
