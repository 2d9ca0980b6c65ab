import { createHash } from 'node:crypto';

/**
 * Where oauth2 keeps what it issues: access tokens (with their refresh tokens) and authorization codes. Every data
 * plane must see a token the moment another one issued it, so the cluster uses Redis (`RedisTokenStore`) and the
 * embedded mode, one process, keeps them in memory (`MemoryTokenStore`). The control plane reads the same store for
 * `/oauth2_tokens`. No store ever holds a token or a code in clear (decision 28): only its SHA-256 digest, in key
 * names and values alike, and an entry goes when what it stands for expires.
 */

/** The digest a token, refresh token or authorization code is stored and looked up by: hex SHA-256. */
export function tokenDigest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Kong's `oauth2_tokens` entity as stored: digests in place of the tokens, plus the clocks of its expiry. */
export interface OAuth2Token {
  id: string;
  /** epoch seconds */
  created_at: number;
  credential: { id: string };
  /** the service it was issued for; null for tokens of a plugin with `global_credentials` */
  service: { id: string } | null;
  token_type: 'bearer';
  /** seconds the access token is valid after issue; 0 = it never expires */
  expires_in: number;
  /** `tokenDigest` of the access token */
  access_token_digest: string;
  /** `tokenDigest` of the refresh token; null when there is none */
  refresh_token_digest: string | null;
  authenticated_userid: string | null;
  scope: string | null;
  /** epoch milliseconds of issue: the expiry clock (created_at is its whole seconds) */
  issued_at_ms: number;
  /** epoch milliseconds at which the refresh token expires (Kong's `refresh_token_ttl`); null = none, or kept until revoked */
  refresh_expires_at_ms: number | null;
  /** epoch milliseconds at which the record goes: when neither the access nor the refresh token is valid; null = kept until revoked */
  removed_at_ms: number | null;
}

/** epoch milliseconds at which the access token expires; null = never */
export function accessExpiresAt(token: Pick<OAuth2Token, 'expires_in' | 'issued_at_ms'>): number | null {
  return token.expires_in > 0 ? token.issued_at_ms + token.expires_in * 1000 : null;
}

/** An authorization code waiting to be exchanged at the token endpoint. */
export interface AuthorizationCode {
  /** `tokenDigest` of the code */
  code_digest: string;
  created_at: number;
  credential: { id: string };
  service: { id: string } | null;
  authenticated_userid: string | null;
  scope: string | null;
  /** PKCE: the code_challenge given at the authorize endpoint, and its method */
  challenge: string | null;
  challenge_method: 'S256' | 'plain' | null;
}

export interface TokenPage {
  data: OAuth2Token[];
  /** where the next page starts, or null on the last page */
  next: string | null;
}

export interface TokenStore {
  /**
   * stores a token: it is found by its access token until that expires, by its refresh token until
   * `refresh_expires_at_ms`, by id until `removed_at_ms` (null: until revoked)
   */
  saveToken(token: OAuth2Token): Promise<void>;
  /** the token whose access token has this digest, while the access token is valid */
  findByAccessDigest(digest: string): Promise<OAuth2Token | null>;
  /** the token whose refresh token has this digest, while the refresh token is valid */
  findByRefreshDigest(digest: string): Promise<OAuth2Token | null>;
  findById(id: string): Promise<OAuth2Token | null>;
  /** removes a token and its refresh token; true only for the one caller that removed it (a refresh is used once) */
  revoke(id: string): Promise<boolean>;
  saveCode(code: AuthorizationCode, lifetimeSeconds: number): Promise<void>;
  findCode(digest: string): Promise<AuthorizationCode | null>;
  /** removes a code; true only for the one caller that removed it (a code is exchanged once) */
  consumeCode(digest: string): Promise<boolean>;
  /** live tokens, those closest to removal first; `after` is a previous page's `next` */
  listTokens(page: { size: number; after?: string | null }): Promise<TokenPage>;
}

/** How the admin API shows a stored digest in place of the token: `sha256:<hex>` (and finds a token by it). */
const DIGEST_SHOWN = /^sha256:([0-9a-f]{64})$/;

/**
 * Kong's `oauth2_tokens` entity as the admin API returns it. Kong shows the tokens themselves; only their digests are
 * kept, so `access_token` and `refresh_token` show those, as `sha256:<hex>` (as Kong shows hashed secrets).
 */
export function presentToken(token: OAuth2Token): Record<string, unknown> {
  return {
    id: token.id,
    created_at: token.created_at,
    credential: token.credential,
    service: token.service,
    token_type: token.token_type,
    expires_in: token.expires_in,
    access_token: `sha256:${token.access_token_digest}`,
    refresh_token: token.refresh_token_digest === null ? null : `sha256:${token.refresh_token_digest}`,
    authenticated_userid: token.authenticated_userid,
    scope: token.scope,
  };
}

/** A page of tokens for `GET /oauth2_tokens`: `{data, offset}` with offset null on the last page. */
export async function listOAuth2Tokens(store: TokenStore, page: { size: number; offset?: string | null }): Promise<{ data: Record<string, unknown>[]; offset: string | null }> {
  const result = await store.listTokens({ size: page.size, after: page.offset ?? null });
  return { data: result.data.map(presentToken), offset: result.next };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A token by id, else by access token (Kong's endpoint key), given in clear or as the admin API shows its digest. */
export function findOAuth2Token(store: TokenStore, ref: string): Promise<OAuth2Token | null> {
  if (UUID.test(ref)) return store.findById(ref);
  const shown = DIGEST_SHOWN.exec(ref);
  return store.findByAccessDigest(shown ? shown[1]! : tokenDigest(ref));
}

/**
 * The order tokens are listed in: time of removal (never-removed last), then id. Fixed width, so comparing the
 * strings compares the times; both stores page by it.
 */
export function listingKey(token: Pick<OAuth2Token, 'id' | 'removed_at_ms'>): string {
  const at = token.removed_at_ms === null ? '9'.repeat(15) : String(token.removed_at_ms).padStart(15, '0');
  return `${at}:${token.id}`;
}

/** The listing key below which every token is gone. */
export function listingKeyAt(nowMs: number): string {
  return String(nowMs).padStart(15, '0');
}

export function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

/** null when the cursor is not one of ours */
export function decodeCursor(cursor: string): string | null {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  return /^\d{15}:[0-9a-f-]{36}$/i.test(key) ? key : null;
}
