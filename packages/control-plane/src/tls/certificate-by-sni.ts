import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { HttpError } from '@gatehouse/core';
import type { AdminContext } from '../http/context';
import { isUuid } from '../service/references';


/**
 * Kong 3.x names a certificate in `/certificates/{c}[/snis[/{s}]]` by its id or by one of its SNI names. A name is
 * turned into the certificate's id before the generated routes see the request; a name no SNI has answers
 * 404 `SNI not found`, except on PUT, which creates a certificate under a new id. A PUT or PATCH of
 * `/certificates/{name}` keeps the name among the certificate's SNIs when the body lists some (Kong's rule); a PUT
 * that creates one without `snis` gives it that one name.
 */
export function mountCertificateBySni(ctx: AdminContext): void {
  const byName = (own: boolean): RequestHandler => async (req, _res, next) => {
    const ref = String(req.params.certificate);
    if (isUuid(ref)) return next();
    const sni = await ctx.entities.find(ctx.entities.kind('snis'), ref);
    const certificateId = (sni?.certificate as { id?: string } | null | undefined)?.id;
    if (!certificateId && req.method !== 'PUT') throw new HttpError(404, 'SNI not found');
    if (own && (req.method === 'PUT' || req.method === 'PATCH')) keepNameAmongSnis(req, ref, !certificateId);
    req.url = req.url.replace(/^\/certificates\/[^/?]+/, `/certificates/${certificateId ?? randomUUID()}`);
    next();
  };
  ctx.router.all('/certificates/:certificate', byName(true));
  ctx.router.all(['/certificates/:certificate/snis', '/certificates/:certificate/snis/:sni'], byName(false));
}

/**
 * Kong's `prepare_args`: on PUT the name in the path joins the listed SNIs; a PUT that creates the certificate
 * without a list gets `[name]` (one that replaces keeps the certificate's SNIs, as a PUT by id does).
 */
function keepNameAmongSnis(req: Request, name: string, creates: boolean): void {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const listed = body.snis;
  if (Array.isArray(listed)) {
    if (req.method === 'PUT' && !listed.includes(name)) body.snis = [...listed, name];
  } else if (typeof listed === 'string') {
    body.snis = req.method === 'PUT' && listed !== name ? [listed, name] : [listed];
  } else if (listed === undefined && creates) {
    body.snis = [name];
  }
  req.body = body;
}
