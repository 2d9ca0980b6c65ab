import type { AdminContext } from '../http/context';
import type { Keyring } from '../keys/keyring';
import { BUNDLED_VAULTS, HttpError, kongEntitySchemaOf, vaults } from '@gatehouse/core';
import { param } from '../http/context';
import { mountCertificateBySni } from './certificate-by-sni';
import { checkClientCertificate } from './certificate-references';
import { caCertificateKind, certificateKind, sniKind, vaultKind } from './kinds';

/**
 * Admin endpoints of the TLS entities, all generated: `/certificates`, `/snis`, `/certificates/{c}/snis[/{s}]`,
 * `/snis/{s}/certificate`, `/ca_certificates`, `/vaults`; a certificate is also named by one of its SNIs. Deleting a
 * certificate removes its SNIs through the foreign key's ON DELETE CASCADE, in the delete's transaction; one a
 * service or an upstream uses is refused.
 */
export function mountTlsRoutes(ctx: AdminContext, keyring: Keyring): void {
  checkClientCertificate(ctx.entities.kind('services'));
  checkClientCertificate(ctx.entities.kind('upstreams'));
  // before the generated routes: `/certificates/{sni name}` becomes `/certificates/{id}`
  mountCertificateBySni(ctx);
  ctx.mountEntity(ctx.entities.register(certificateKind(keyring, ctx.store)));
  ctx.mountEntity(ctx.entities.register(sniKind));
  ctx.mountEntity(ctx.entities.register(caCertificateKind));
  ctx.mountEntity(ctx.entities.register(vaultKind));
  // Kong Manager's vault form reads the schema of the chosen vault; `env` is the one bundled
  ctx.resources.add('/schemas/vaults/:name', {
    get: (req, res) => {
      const name = param(req, 'name');
      if (!(BUNDLED_VAULTS as readonly string[]).includes(name)) throw new HttpError(404, `No vault named '${name}'`);
      res.json(kongEntitySchemaOf(vaults));
    },
  });
}

/** For `createAdminApp({ extensions: [tlsExtension(keyring)] })`; needs `tlsMigrations()`. */
export function tlsExtension(keyring: Keyring): (ctx: AdminContext) => void {
  return (ctx) => mountTlsRoutes(ctx, keyring);
}
