import type { Registry } from 'prom-client';
import type { AdminContext } from '../http/context';

/** `GET /metrics` on the admin API: the node's registry in Prometheus text format (behind RBAC like any admin path). */
export function metricsExtension(registry: Registry): (ctx: AdminContext) => void {
  return (ctx) => {
    ctx.resources.add('/metrics', {
      get: async (_req, res) => {
        const text = await registry.metrics();
        res.status(200).type(registry.contentType).send(text);
      },
    });
  };
}
