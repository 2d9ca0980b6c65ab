import type { AdminContext } from '../http/context';
import type { Keyring } from '../keys/keyring';
import { certificates } from '@gatehouse/core';
import { caCertificateKind, certificateKind, sniKind, vaultKind } from './kinds';
import { redactPrivateFields } from './private-fields';

/** GET paths answering certificates: the collection, one certificate, an SNI's certificate, a service's client certificate */
const CERTIFICATE_READS = /(?:^|\/)certificates(?:\/[^/]+)?\/?$|\/snis\/[^/]+\/certificate\/?$/;

/**
 * Admin endpoints of the TLS entities, all generated: `/certificates`, `/snis`, `/certificates/{c}/snis[/{s}]`,
 * `/snis/{s}/certificate`, `/ca_certificates`, `/vaults`. Deleting a certificate removes its SNIs through the
 * foreign key's ON DELETE CASCADE, in the delete's transaction.
 */
export function mountTlsRoutes(ctx: AdminContext, keyring: Keyring): void {
  ctx.router.use(redactPrivateFields(certificates, CERTIFICATE_READS));
  ctx.mountEntity(ctx.entities.register(certificateKind(keyring, ctx.store)));
  ctx.mountEntity(ctx.entities.register(sniKind));
  ctx.mountEntity(ctx.entities.register(caCertificateKind));
  ctx.mountEntity(ctx.entities.register(vaultKind));
}

/** For `createAdminApp({ extensions: [tlsExtension(keyring)] })`; needs `tlsMigrations()`. */
export function tlsExtension(keyring: Keyring): (ctx: AdminContext) => void {
  return (ctx) => mountTlsRoutes(ctx, keyring);
}
