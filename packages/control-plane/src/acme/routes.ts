import { Errors } from '@gatehouse/core';
import { acmeConfigSchema, coversDomain, type AcmeChallengeStore, type AcmeConfig, type AcmeOrderChannel } from '@gatehouse/plugins';
import type { AdminContext } from '../http/context';
import { decodeOffset } from '../service/paging';
import { AcmeAccounts, expiresWithin, orderCertificate, type IssuedCertificate } from './ordering';

function message(status: number, text: string): { status: number; body: { message: string } } {
  return { status, body: { message: text } };
}

/** The acme plugin's configuration (Kong's acme is global: the first one found). */
async function acmeConfig(ctx: AdminContext): Promise<AcmeConfig | null> {
  const plugins = ctx.entities.kind('plugins');
  let after: unknown[] | undefined;
  for (;;) {
    const page = await ctx.entities.list(plugins, { size: 1000, after });
    const found = page.data.find((p) => p.name === 'acme');
    if (found !== undefined) return acmeConfigSchema.parse(found.config);
    if (page.offset === null) return null;
    after = decodeOffset(page.offset);
  }
}

/** Stores an issued certificate as Kong's entities: a new certificate with the host as SNI, or the one already serving it. */
async function store(ctx: AdminContext, host: string, issued: IssuedCertificate): Promise<void> {
  const sni = await ctx.entities.find(ctx.entities.kind('snis'), host);
  const body = { cert: issued.cert, key: issued.key, tags: ['acme'] };
  const certificateId = (sni?.certificate as { id?: string } | undefined)?.id;
  if (certificateId !== undefined) await ctx.entities.patch(ctx.entities.kind('certificates'), certificateId, { body, form: false, locals: {} });
  else await ctx.entities.create(ctx.entities.kind('certificates'), { body: { ...body, snis: [host] }, form: false, locals: {} });
}

/**
 * Kong's acme admin endpoints. `POST /acme` (`host`) orders a certificate for a host the plugin covers and stores it
 * as a `certificates` entity with the host as SNI, so every data plane serves it (201 `certificate for host <host> is
 * created`); with `test_http_challenge_flow` it only checks the host is covered. `PATCH /acme` renews, in the
 * background, the certificates it issued that expire within `renew_threshold_days` (202).
 */
export function mountAcmeRoutes(ctx: AdminContext, challenges: AcmeChallengeStore, accounts = new AcmeAccounts()): { renew: () => Promise<number> } {
  async function renew(): Promise<number> {
    const config = await acmeConfig(ctx);
    if (config === null) return 0;
    const page = await ctx.entities.list(ctx.entities.kind('snis'), { size: 1000 });
    let renewed = 0;
    for (const sni of page.data) {
      const certificateId = (sni.certificate as { id?: string } | undefined)?.id;
      if (certificateId === undefined) continue;
      const certificate = await ctx.entities.find(ctx.entities.kind('certificates'), certificateId);
      const tags = (certificate?.tags as string[] | null | undefined) ?? [];
      if (certificate === null || !tags.includes('acme') || typeof certificate.cert !== 'string') continue;
      if (!expiresWithin(certificate.cert, config.renew_threshold_days)) continue;
      await store(ctx, String(sni.name), await orderCertificate(config, String(sni.name), accounts, challenges));
      renewed++;
    }
    return renewed;
  }

  ctx.resources.add('/acme', {
    post: async (req, res) => {
      const config = await acmeConfig(ctx);
      if (config === null) throw Errors.notFound();
      const input = (req.body ?? {}) as Record<string, unknown>;
      const host = input.host;
      let answer: { status: number; body: { message: string } };
      if (typeof host !== 'string' || host === '') answer = message(400, 'host must be provided and containing a single domain');
      else if (host.includes(':')) answer = message(400, 'port is not allowed in host');
      else if (input.test_http_challenge_flow === true || input.test_http_challenge_flow === 'true') {
        answer = coversDomain(config, host)
          ? message(200, `sanity test for host ${host} passed`)
          : message(400, `problem found running sanity check for ${host}: host is not included in plugin config.domains`);
      } else if (!coversDomain(config, host)) answer = message(400, `problem found running sanity check for ${host}: host is not included in plugin config.domains`);
      else {
        try {
          await store(ctx, host, await orderCertificate(config, host, accounts, challenges));
          answer = message(201, `certificate for host ${host} is created`);
        } catch (err) {
          answer = message(500, `failed to update certificate: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      res.status(answer.status).json(answer.body);
    },
    patch: async (_req, res) => {
      void renew().catch(() => undefined);
      res.status(202).json({ message: 'Renewal process started successfully' });
    },
  });
  return { renew };
}

/** how often the control plane renews what is due, as Kong's daily timer */
const RENEW_EVERY_MS = 86_400_000;
/** how long one control plane holds a name it orders for: others leave it alone meanwhile */
const ORDER_CLAIM_MS = 10 * 60_000;

/**
 * Orders what the data planes ask for (Kong's acme `certificate` phase): a name the plugin covers that has no SNI yet
 * is ordered by the one control plane that claims it, and stored as `POST /acme` stores it.
 */
export function serveOnDemandOrders(ctx: AdminContext, challenges: AcmeChallengeStore, orders: AcmeOrderChannel, onError: (host: string, err: Error) => void, accounts = new AcmeAccounts()): () => void {
  const order = async (host: string) => {
    const config = await acmeConfig(ctx);
    if (config === null || !coversDomain(config, host)) return;
    if ((await ctx.entities.find(ctx.entities.kind('snis'), host)) !== null) return;
    if (!(await orders.claim(host, ORDER_CLAIM_MS))) return;
    await store(ctx, host, await orderCertificate(config, host, accounts, challenges));
  };
  return orders.listen((host) => void order(host).catch((err: unknown) => onError(host, err instanceof Error ? err : new Error(String(err)))));
}

/**
 * For `createAdminApp({ extensions: [acmeExtension(challenges, orders)] })`, with the store the data planes answer
 * from and the channel they ask for certificates on; renews what is due once a day too (the timer never keeps the
 * process alive).
 */
export function acmeExtension(challenges: AcmeChallengeStore, orders?: AcmeOrderChannel, onError: (host: string, err: Error) => void = () => undefined): (ctx: AdminContext) => void {
  return (ctx) => {
    const { renew } = mountAcmeRoutes(ctx, challenges);
    if (orders) serveOnDemandOrders(ctx, challenges, orders, onError);
    setInterval(() => void renew().catch(() => undefined), RENEW_EVERY_MS).unref();
  };
}
