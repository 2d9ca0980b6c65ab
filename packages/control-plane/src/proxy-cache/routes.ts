import { Errors } from '@gatehouse/core';
import type { CachedResponse, ProxyCacheAdmin } from '@gatehouse/plugins';
import { param, type AdminContext } from '../http/context';

function present(key: string, entry: CachedResponse): Record<string, unknown> {
  return { key, status: entry.status, headers: entry.headers, body: entry.body.toString('utf8'), body_len: entry.body.length, timestamp: Math.floor(entry.at), ttl: entry.ttl };
}

/**
 * Kong's proxy-cache admin endpoints: `DELETE /proxy-cache` purges every entry; `GET` / `DELETE /proxy-cache/{key}`
 * read and purge one; `/proxy-cache/{plugin_id}/caches/{key}` does the same for one proxy-cache plugin (404 when the
 * plugin does not exist). Entries of the `redis` strategy are acted on in Redis; data planes' memory caches receive
 * the purge over Redis pub/sub (or, in embedded mode without Redis, are purged in place).
 */
export function mountProxyCacheRoutes(ctx: AdminContext, caches: ProxyCacheAdmin, pluginExists: (id: string) => Promise<boolean>): void {
  const read = async (key: string) => {
    const entry = await caches.find(key);
    if (entry === null) throw Errors.notFound();
    return present(key, entry);
  };
  const purge = async (key: string) => {
    if (!(await caches.delete(key))) throw Errors.notFound();
  };
  const plugin = async (id: string) => {
    if (!(await pluginExists(id))) throw Errors.notFound();
  };
  ctx.resources.add('/proxy-cache', {
    delete: async (_req, res) => {
      await caches.deleteAll();
      res.status(204).end();
    },
  });
  ctx.resources.add('/proxy-cache/:key', {
    get: async (req, res) => void res.status(200).json(await read(param(req, 'key'))),
    delete: async (req, res) => {
      await purge(param(req, 'key'));
      res.status(204).end();
    },
  });
  ctx.resources.add('/proxy-cache/:plugin/caches/:key', {
    get: async (req, res) => {
      await plugin(param(req, 'plugin'));
      res.status(200).json(await read(param(req, 'key')));
    },
    delete: async (req, res) => {
      await plugin(param(req, 'plugin'));
      await purge(param(req, 'key'));
      res.status(204).end();
    },
  });
}

/**
 * Kong's `/cache` paths over what the data planes cache: `DELETE /cache` purges every proxy-cache entry (memory caches
 * on every data plane, over Redis, and the shared `redis` strategy), `GET /cache/{key}` reads one (404 when absent),
 * `DELETE /cache/{key}` purges one (204 whether or not it was there, as Kong).
 */
export function mountCacheRoutes(ctx: AdminContext, caches: ProxyCacheAdmin): void {
  ctx.resources.add('/cache', {
    delete: async (_req, res) => {
      await caches.deleteAll();
      res.status(204).end();
    },
  });
  ctx.resources.add('/cache/:key', {
    get: async (req, res) => {
      const entry = await caches.find(param(req, 'key'));
      if (entry === null) throw Errors.notFound();
      res.status(200).json(present(param(req, 'key'), entry));
    },
    delete: async (req, res) => {
      await caches.delete(param(req, 'key'));
      res.status(204).end();
    },
  });
}

/** For `createAdminApp({ extensions: [proxyCacheExtension(admin)] })`, with the caches the data planes use. */
export function proxyCacheExtension(caches: ProxyCacheAdmin): (ctx: AdminContext) => void {
  return (ctx) => {
    mountCacheRoutes(ctx, caches);
    mountProxyCacheRoutes(ctx, caches, async (id) => {
      const plugin = await ctx.entities.find(ctx.entities.kind('plugins'), id);
      return plugin !== null && (plugin as { name?: unknown }).name === 'proxy-cache';
    });
  };
}
