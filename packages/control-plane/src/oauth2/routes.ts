import { Errors } from '@gatehouse/core';
import { decodeOAuth2TokenCursor, findOAuth2Token, listOAuth2Tokens, presentOAuth2Token, type OAuth2TokenStore } from '@gatehouse/plugins';
import { collectionPath, param, type AdminContext } from '../http/context';
import { nextLink, parseListQuery } from '../service/paging';
import { mountOAuth2TokenWrites } from './token-writes';

function single(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.length > 0 ? String(value[value.length - 1]) : undefined;
  return value === undefined || value === null ? undefined : String(value);
}

/**
 * Kong's `/oauth2_tokens` over the token store the data planes write (Redis in a cluster, the shared in-memory store in
 * embedded mode): tokens never pass through Postgres. `GET /oauth2_tokens` pages them (`size`, `offset`, `next`);
 * `GET` and `DELETE /oauth2_tokens/{id or access_token}` read and revoke one (a revoked token stops working on every
 * data plane at once, its refresh token with it).
 */
export function mountOAuth2TokenRoutes(ctx: AdminContext, store: OAuth2TokenStore): void {
  ctx.resources.add('/oauth2_tokens', {
    get: async (req, res) => {
      const q = parseListQuery({ size: req.query.size });
      const offset = single(req.query.offset);
      if (offset !== undefined && offset !== '' && decodeOAuth2TokenCursor(offset) === null) throw Errors.invalidOffset(offset);
      const page = await listOAuth2Tokens(store, { size: q.size, offset: offset || null });
      const body: Record<string, unknown> = { data: page.data };
      if (page.offset !== null) body.offset = page.offset;
      body.next = nextLink(collectionPath(req), page.offset, q);
      res.status(200).json(body);
    },
  });
  ctx.resources.add('/oauth2_tokens/:token', {
    get: async (req, res) => {
      const token = await findOAuth2Token(store, param(req, 'token'));
      if (token === null) throw Errors.notFound();
      res.status(200).json(presentOAuth2Token(token));
    },
    delete: async (req, res) => {
      const token = await findOAuth2Token(store, param(req, 'token'));
      if (token !== null) await store.revoke(token.id);
      res.status(204).end();
    },
  });
}

/** For `createAdminApp({ extensions: [oauth2TokensExtension(store)] })`, with the store the data planes use. */
export function oauth2TokensExtension(store: OAuth2TokenStore): (ctx: AdminContext) => void {
  return (ctx) => {
    mountOAuth2TokenRoutes(ctx, store);
    mountOAuth2TokenWrites(ctx, store);
  };
}
