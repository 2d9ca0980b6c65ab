import type { Request, Response } from 'express';
import { Errors, HttpError, parseHostPort, rowOf, targets, upstreams, type Upstream } from '@gatehouse/core';
import type { HealthChannel } from '@gatehouse/sync';
import { accessOf, param, sendList, writeInput, type AdminContext } from '../http/context';
import type { EntityAccess } from '../service/entity-access';
import type { EntityKind } from '../service/entity-kind';
import { parseListQuery } from '../service/paging';
import { isUuid } from '../service/references';
import type { StoredEntity } from '../store/entity-repository';
import { balancerHealthView, targetHealthView } from './health-view';
import { queryFlag } from '../http/query-flags';

/** A data plane counts as live for health while its last report is younger than this. */
export const LIVE_HEALTH_REPORT_SECONDS = 30;

export interface UpstreamRoutesOptions {
  /** where data planes report health and hear manual health changes; null: answers from the configuration only */
  health: HealthChannel | null;
}

/** One target of `GET /upstreams/{upstream}/health`: the row, its health and its addresses' weights. */
function targetHealthRow(upstream: Upstream, row: Record<string, unknown>, live: Parameters<typeof targetHealthView>[2]) {
  const target = rowOf(targets, row);
  const view = targetHealthView(upstream, target, live);
  const available = view.addresses.filter((a) => a.health === 'HEALTHY' || a.health === 'HEALTHCHECKS_OFF').reduce((n, a) => n + a.weight, 0);
  const total = view.addresses.reduce((n, a) => n + a.weight, 0);
  const parsed = parseHostPort(target.target);
  return {
    ...row,
    health: view.health,
    data: {
      addresses: view.addresses,
      dns: parsed?.kind === 'name' ? 'A' : parsed?.kind === 'ipv6' ? 'AAAA' : 'A',
      nodeWeight: target.weight,
      weight: { total, available, unavailable: total - available },
    },
    data_planes: view.data_planes,
  };
}

/** The manual health change a `PUT …/healthy|unhealthy` asks for: a target's, or one of its resolved addresses'. */
function manualCommand(upstreamId: string, target: string, healthy: boolean, address: string | null): Parameters<HealthChannel['publishManual']>[0] {
  const command = { upstream_id: upstreamId, target, healthy };
  if (address === null) return command;
  const parsed = parseHostPort(address);
  if (parsed === null || parsed.kind === 'name') throw new HttpError(400, `invalid address '${address}': expected ip or ip:port`);
  const port = parsed.port ?? parseHostPort(target)?.port ?? 8000;
  return { ...command, address: `${parsed.kind === 'ipv6' ? `[${parsed.host}]` : parsed.host}:${port}` };
}

/**
 * Kong's upstream endpoints beyond the generated ones: targets addressed by id or `host:port` inside their upstream,
 * `/targets/all`, `/health` (per target, or the balancer with `?balancer_health=1`) and manual health
 * (`PUT …/healthy|unhealthy`, per target or per resolved address), broadcast to every data plane. Mounted before the
 * generated routes, which would read `all` or `host:port` as a key of any upstream.
 */
export function mountUpstreamRoutes(ctx: AdminContext, options: UpstreamRoutesOptions): void {
  const { entities, resources } = ctx;
  const upstreamKind = (): EntityKind => entities.kind('upstreams');
  const targetKind = (): EntityKind => entities.kind('targets');

  // the caller reads the upstream the path names, and the target it names unless the request writes that target
  const upstreamOf = async (req: Request, res: Response): Promise<StoredEntity> => {
    const found = await entities.find(upstreamKind(), param(req, 'parent'), undefined, undefined, accessOf(res));
    if (!found) throw Errors.notFound();
    return found;
  };

  /** a target of this upstream by id or by `host[:port]` (port 8000 when omitted) */
  const findTarget = (upstreamId: string, ref: string, access?: EntityAccess): Promise<StoredEntity | null> =>
    entities.find(targetKind(), ref, { field: 'upstream', id: upstreamId }, undefined, access);

  const targetOf = async (req: Request, upstream: StoredEntity, access?: EntityAccess): Promise<StoredEntity> => {
    const found = await findTarget(upstream.id, param(req, 'ref'), access);
    if (!found) throw Errors.notFound();
    return found;
  };

  const listTargets = async (req: Request, res: Response) => {
    const upstream = await upstreamOf(req, res);
    const q = parseListQuery(req.query);
    sendList(req, res, q, await entities.list(targetKind(), q, { field: 'upstream', id: upstream.id }, undefined, accessOf(res)));
  };

  resources.add('/upstreams/:parent/targets', {
    get: listTargets,
    post: async (req, res) => {
      const upstream = await upstreamOf(req, res);
      res.status(201).json(await entities.create(targetKind(), writeInput(req, res), { field: 'upstream', id: upstream.id }));
    },
  });
  resources.add('/upstreams/:parent/targets/all', { get: listTargets });

  resources.add('/upstreams/:parent/targets/:ref', {
    get: async (req, res) => {
      const upstream = await upstreamOf(req, res);
      res.json(entities.present(targetKind(), await targetOf(req, upstream, accessOf(res))));
    },
    patch: async (req, res) => {
      const upstream = await upstreamOf(req, res);
      const target = await targetOf(req, upstream);
      res.json(await entities.patch(targetKind(), target.id, writeInput(req, res), { field: 'upstream', id: upstream.id }));
    },
    put: async (req, res) => {
      const upstream = await upstreamOf(req, res);
      const ref = param(req, 'ref');
      const scope = { field: 'upstream', id: upstream.id };
      const input = writeInput(req, res);
      const existing = await findTarget(upstream.id, ref);
      // the URL names the target: by `host:port` it forces the target field, by id the id
      const body = isUuid(ref) ? input.body : { ...input.body, target: ref };
      if (existing) return void res.json(await entities.upsert(targetKind(), existing.id, { ...input, body }, scope));
      if (isUuid(ref)) return void res.json(await entities.upsert(targetKind(), ref, input, scope));
      res.json(await entities.create(targetKind(), { ...input, body }, scope));
    },
    delete: async (req, res) => {
      const upstream = await upstreamOf(req, res);
      const target = await targetOf(req, upstream);
      await entities.remove(targetKind(), target.id, { field: 'upstream', id: upstream.id }, writeInput(req, res));
      res.status(204).end();
    },
  });

  const reports = async () => (options.health ? options.health.list(LIVE_HEALTH_REPORT_SECONDS) : []);

  resources.add('/upstreams/:parent/health', {
    get: async (req, res) => {
      const upstream = rowOf(upstreams, await upstreamOf(req, res));
      const live = await reports();
      if (queryFlag(req, 'balancer_health')) {
        const view = balancerHealthView(upstream, live);
        res.json({ data: { health: view.health, id: upstream.id, details: { data_planes: view.data_planes } }, next: null });
        return;
      }
      const q = parseListQuery(req.query);
      const page = await entities.list(targetKind(), q, { field: 'upstream', id: upstream.id }, undefined, accessOf(res));
      const data = page.data.map((row) => targetHealthRow(upstream, row, live));
      sendList(req, res, q, { data, offset: page.offset });
    },
  });

  const manual = (healthy: boolean, perAddress: boolean) => async (req: Request, res: Response) => {
    const upstream = await upstreamOf(req, res);
    const target = rowOf(targets, await targetOf(req, upstream, accessOf(res)));
    await options.health?.publishManual(manualCommand(upstream.id, target.target, healthy, perAddress ? param(req, 'address') : null));
    res.status(204).end();
  };
  for (const healthy of [true, false]) {
    const word = healthy ? 'healthy' : 'unhealthy';
    resources.add(`/upstreams/:parent/targets/:ref/${word}`, { put: manual(healthy, false), post: manual(healthy, false) });
    resources.add(`/upstreams/:parent/targets/:ref/:address/${word}`, { put: manual(healthy, true), post: manual(healthy, true) });
  }
}
