/**
 * Where oauth2 keeps what it issues: access tokens (with their refresh tokens) and authorization codes. Every data
 * plane must see a token the moment another one issued it, so the cluster uses Redis (`RedisTokenStore`) and the
 * embedded mode, one process, keeps them in memory (`MemoryTokenStore`). The control plane reads the same store for
 * `/oauth2_tokens`.
 */

/** An access token as Kong's `oauth2_tokens` entity shows it, plus the issue time in milliseconds. */
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
  access_token: string;
  refresh_token: string | null;
  authenticated_userid: string | null;
  scope: string | null;
  /** epoch milliseconds of issue: the expiry clock (created_at is its whole seconds) */
  issued_at_ms: number;
  /** epoch milliseconds at which the record, and with it the refresh token, is removed; null = kept until revoked */
  removed_at_ms: number | null;
}

/** An authorization code waiting to be exchanged at the token endpoint. */
export interface AuthorizationCode {
  code: string;
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
  /** stores a token; it and its refresh token disappear at `token.removed_at_ms` (null: kept until revoked) */
  saveToken(token: OAuth2Token): Promise<void>;
  findByAccessToken(accessToken: string): Promise<OAuth2Token | null>;
  findByRefreshToken(refreshToken: string): Promise<OAuth2Token | null>;
  findById(id: string): Promise<OAuth2Token | null>;
  /** removes a token and its refresh token; true only for the one caller that removed it (a refresh is used once) */
  revoke(id: string): Promise<boolean>;
  saveCode(code: AuthorizationCode, lifetimeSeconds: number): Promise<void>;
  findCode(code: string): Promise<AuthorizationCode | null>;
  /** removes a code; true only for the one caller that removed it (a code is exchanged once) */
  consumeCode(code: string): Promise<boolean>;
  /** live tokens, those closest to removal first; `after` is a previous page's `next` */
  listTokens(page: { size: number; after?: string | null }): Promise<TokenPage>;
}

/** Kong's `oauth2_tokens` entity as the admin API returns it. */
export function presentToken(token: OAuth2Token): Record<string, unknown> {
  return {
    id: token.id,
    created_at: token.created_at,
    credential: token.credential,
    service: token.service,
    token_type: token.token_type,
    expires_in: token.expires_in,
    access_token: token.access_token,
    refresh_token: token.refresh_token,
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

/** A token by id, or by access token when `ref` is not a UUID (Kong's endpoint key). */
export function findOAuth2Token(store: TokenStore, ref: string): Promise<OAuth2Token | null> {
  return UUID.test(ref) ? store.findById(ref) : store.findByAccessToken(ref);
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
