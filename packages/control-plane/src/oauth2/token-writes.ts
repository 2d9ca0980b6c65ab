import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Errors, schemaViolation } from '@gatehouse/core';
import { findOAuth2Token, oauth2TokenDigest, presentOAuth2Token, randomCredentialString, type OAuth2Token, type OAuth2TokenStore } from '@gatehouse/plugins';
import type { Request, Response } from 'express';
import { accessOf, param, type AdminContext } from '../http/context';

const ref = z.object({ id: z.uuid() }).strict();
const text = z.string().min(1).max(1024);

/** Kong's oauth2_tokens fields an admin may give (access and refresh tokens are generated when absent). */
const tokenInput = z
  .object({
    credential: ref,
    service: ref.nullable().default(null),
    token_type: z.literal('bearer').default('bearer'),
    expires_in: z.number().int().min(0).max(100_000_000).default(7200),
    access_token: text.optional(),
    refresh_token: text.nullable().optional(),
    scope: text.nullable().default(null),
    authenticated_userid: text.nullable().default(null),
  })
  .strict();

function violation(error: z.ZodError): Error {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) fields[issue.path.join('.') || '@entity'] = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
  return schemaViolation(fields);
}

/** The record a token input stores, and the tokens in clear shown once in the reply. */
function tokenOf(input: z.infer<typeof tokenInput>, id: string, createdAt: number): { token: OAuth2Token; clear: Record<string, string> } {
  const access = input.access_token ?? randomCredentialString();
  const refresh = input.refresh_token === undefined ? randomCredentialString() : input.refresh_token;
  const now = Date.now();
  const accessExpires = input.expires_in > 0 ? now + input.expires_in * 1000 : null;
  const token: OAuth2Token = {
    id,
    created_at: createdAt,
    credential: input.credential,
    service: input.service,
    token_type: 'bearer',
    expires_in: input.expires_in,
    access_token_digest: oauth2TokenDigest(access),
    refresh_token_digest: refresh === null ? null : oauth2TokenDigest(refresh),
    authenticated_userid: input.authenticated_userid,
    scope: input.scope,
    issued_at_ms: now,
    refresh_expires_at_ms: null,
    // a refresh token is kept until revoked (no refresh_token_ttl for admin-made tokens)
    removed_at_ms: refresh === null ? accessExpires : null,
  };
  return { token, clear: { access_token: access, ...(refresh === null ? {} : { refresh_token: refresh }) } };
}

/**
 * Kong's generated writes of `oauth2_tokens`: `POST /oauth2_tokens` (201; the tokens in clear in that reply only),
 * `PATCH /oauth2_tokens/{id}`, `/oauth2_tokens/{id}/credential` and `/service` (GET the referenced entity), and the
 * tokens of one credential or service (`/oauth2/{c}/oauth2_tokens`, `/services/{s}/oauth2_tokens`).
 */
export function mountOAuth2TokenWrites(ctx: AdminContext, store: OAuth2TokenStore): void {
  const { entities } = ctx;
  const credentials = entities.kind('oauth2_credentials');
  const services = entities.kind('services');
  const checkRefs = async (input: z.infer<typeof tokenInput>) => {
    if (!(await entities.find(credentials, input.credential.id))) throw schemaViolation({ credential: `the foreign key '{id="${input.credential.id}"}' does not reference an existing 'oauth2_credentials' entity.` });
    if (input.service && !(await entities.find(services, input.service.id))) throw schemaViolation({ service: `the foreign key '{id="${input.service.id}"}' does not reference an existing 'services' entity.` });
  };
  const existing = async (req: Request) => {
    const token = await findOAuth2Token(store, param(req, 'token'));
    if (token === null) throw Errors.notFound();
    return token;
  };
  ctx.resources.add('/oauth2_tokens', {
    post: async (req, res) => {
      const parsed = tokenInput.safeParse(req.body ?? {});
      if (!parsed.success) throw violation(parsed.error);
      await checkRefs(parsed.data);
      const { token, clear } = tokenOf(parsed.data, randomUUID(), Math.floor(Date.now() / 1000));
      await store.saveToken(token);
      res.status(201).json({ ...presentOAuth2Token(token), ...clear });
    },
  });
  ctx.resources.add('/oauth2_tokens/:token', {
    patch: async (req, res) => {
      const token = await existing(req);
      const shown = presentOAuth2Token(token);
      const body = (req.body ?? {}) as Record<string, unknown>;
      const merged = { credential: token.credential, service: token.service, expires_in: token.expires_in, scope: token.scope, authenticated_userid: token.authenticated_userid, ...body };
      const parsed = tokenInput.safeParse(merged);
      if (!parsed.success) throw violation(parsed.error);
      await checkRefs(parsed.data);
      const next = tokenOf(parsed.data, token.id, token.created_at);
      // tokens not given keep their values
      if (body.access_token === undefined) next.token.access_token_digest = token.access_token_digest;
      if (body.refresh_token === undefined) next.token.refresh_token_digest = token.refresh_token_digest;
      await store.revoke(token.id);
      await store.saveToken(next.token);
      const clear = Object.fromEntries(Object.entries(next.clear).filter(([k]) => body[k] !== undefined));
      res.status(200).json({ ...shown, ...presentOAuth2Token(next.token), ...clear });
    },
  });
  const referenced = (field: 'credential' | 'service', kind: typeof credentials) => async (req: Request, res: Response) => {
    const token = await existing(req);
    const id = token[field]?.id;
    if (!id) throw Errors.notFound();
    res.json(await entities.get(kind, id, undefined, accessOf(res)));
  };
  ctx.resources.add('/oauth2_tokens/:token/credential', { get: referenced('credential', credentials) });
  ctx.resources.add('/oauth2_tokens/:token/service', { get: referenced('service', services) });
  const tokensOf = (field: 'credential' | 'service', kind: typeof credentials) => async (req: Request, res: Response) => {
    const parent = await entities.find(kind, param(req, 'parent'), undefined, undefined, accessOf(res));
    if (!parent) throw Errors.notFound();
    const data: Record<string, unknown>[] = [];
    let after: string | null = null;
    do {
      const page = await store.listTokens({ size: 1000, after });
      for (const t of page.data) if (t[field]?.id === parent.id) data.push(presentOAuth2Token(t));
      after = page.next;
    } while (after !== null);
    res.status(200).json({ data, next: null });
  };
  ctx.resources.add('/oauth2/:parent/oauth2_tokens', { get: tokensOf('credential', credentials) });
  ctx.resources.add('/services/:parent/oauth2_tokens', { get: tokensOf('service', services) });
}
