import type { PluginContext, PluginResponse } from '../contract';
import { processChallenges, redisChallenges } from './challenges';
import { coversDomain, type AcmeConfig } from './schema';

const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
const NOT_FOUND: PluginResponse = Object.freeze({ status: 404, body: 'Not found\n' });

function hostOf(ctx: PluginContext): string | null {
  const host = ctx.req.headers.host;
  const value = Array.isArray(host) ? host[0] : host;
  if (value === undefined || value === '') return null;
  return value.startsWith('[') ? value.slice(0, value.indexOf(']') + 1) : value.replace(/:\d+$/, '');
}

/**
 * Answers the CA's HTTP-01 challenges on plain HTTP for the plugin's domains: `/.well-known/acme-challenge/<token>`
 * gets the key authorization the order left (in the data planes' Redis, or this process), or Kong's 404 `Not found`
 * (always for the token `x`, the sanity check of `POST /acme` with `test_http_challenge_flow`). Other requests pass.
 */
export async function acmeAccess(ctx: PluginContext, config: AcmeConfig): Promise<PluginResponse | void> {
  if (ctx.req.scheme !== 'http' || !ctx.req.path.startsWith(CHALLENGE_PREFIX)) return;
  const host = hostOf(ctx);
  if (host === null || !coversDomain(config, host)) return;
  const token = ctx.req.path.slice(CHALLENGE_PREFIX.length);
  if (token === '' || token === 'x' || token.includes('/')) return NOT_FOUND;
  const store = ctx.runtime.redis !== undefined ? redisChallenges(ctx.runtime.redis, ctx.runtime.redisPrefix ?? '') : processChallenges;
  const keyAuthorization = await store.get(token);
  if (keyAuthorization === null) return NOT_FOUND;
  return { status: 200, body: keyAuthorization, headers: { 'content-type': 'text/plain' } };
}
