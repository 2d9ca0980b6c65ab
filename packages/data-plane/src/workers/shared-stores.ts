import type {
  OAuth2AuthorizationCode as AuthorizationCode,
  CachedResponse,
  CacheStore,
  LocalCounters,
  OAuth2Token,
  OAuth2TokenStore,
  PeriodLimit,
  RateLimitCounterStore,
  Tally,
  OAuth2TokenPage as TokenPage,
} from '@gatehouse/plugins';
import type { SharedCallClient, SharedCallServer } from './shared-calls';

/** Service names of the node's shared stores. */
export const SHARED = { rateLimit: 'rate-limit', proxyCache: 'proxy-cache', oauth2Tokens: 'oauth2-tokens' } as const;

const CACHE_METHODS = ['get', 'set', 'delete', 'clear'] as const;
const TOKEN_METHODS = ['saveToken', 'findByAccessDigest', 'findByRefreshDigest', 'findById', 'revoke', 'saveCode', 'findCode', 'consumeCode', 'listTokens'] as const;

/** A cached response as it crosses the IPC channel (JSON): the body in base64. */
interface WireResponse extends Omit<CachedResponse, 'body'> {
  body: string;
}

function toWire(entry: CachedResponse): WireResponse {
  return { ...entry, body: entry.body.toString('base64') };
}

function fromWire(entry: WireResponse): CachedResponse {
  return { ...entry, body: Buffer.from(entry.body, 'base64') };
}

/** The node's state a worker reaches through its primary: what `PluginRuntime` gets instead of per-process stores. */
export interface NodeStores {
  rateLimitCounters: RateLimitCounterStore;
  proxyCacheMemory: CacheStore;
  /** null when the node has no embedded token store (oauth2 then uses Redis, shared by every process already) */
  oauth2Tokens: OAuth2TokenStore | null;
}

/** The worker's side: stores whose every call is one (batched) call to the primary. */
export function remoteNodeStores(client: SharedCallClient, withTokens: boolean): NodeStores {
  const rateLimitCounters: RateLimitCounterStore = {
    take: (key: string, limits: readonly PeriodLimit[]) => client.call<Tally>(SHARED.rateLimit, 'take', [key, limits]),
    peek: (key: string, limits: readonly PeriodLimit[]) => client.call<number[]>(SHARED.rateLimit, 'peek', [key, limits]),
    add: (key: string, limits: readonly PeriodLimit[], amount: number) => client.call<void>(SHARED.rateLimit, 'add', [key, limits, amount]),
  };
  const proxyCacheMemory: CacheStore = {
    get: (key) => client.call<WireResponse | null>(SHARED.proxyCache, 'get', [key]).then((entry) => (entry === null ? null : fromWire(entry))),
    set: (key, entry, storageTtl) => client.call<void>(SHARED.proxyCache, 'set', [key, toWire(entry), storageTtl]),
    delete: (key) => client.call<boolean>(SHARED.proxyCache, 'delete', [key]),
    clear: () => client.call<void>(SHARED.proxyCache, 'clear', []),
  };
  const tokens = (method: (typeof TOKEN_METHODS)[number]) => (...args: unknown[]) => client.call(SHARED.oauth2Tokens, method, args);
  const oauth2Tokens: OAuth2TokenStore | null = withTokens
    ? {
        saveToken: tokens('saveToken') as (token: OAuth2Token) => Promise<void>,
        findByAccessDigest: tokens('findByAccessDigest') as (digest: string) => Promise<OAuth2Token | null>,
        findByRefreshDigest: tokens('findByRefreshDigest') as (digest: string) => Promise<OAuth2Token | null>,
        findById: tokens('findById') as (id: string) => Promise<OAuth2Token | null>,
        revoke: tokens('revoke') as (id: string) => Promise<boolean>,
        saveCode: tokens('saveCode') as (code: AuthorizationCode, lifetimeSeconds: number) => Promise<void>,
        findCode: tokens('findCode') as (digest: string) => Promise<AuthorizationCode | null>,
        consumeCode: tokens('consumeCode') as (digest: string) => Promise<boolean>,
        listTokens: tokens('listTokens') as (page: { size: number; after?: string | null }) => Promise<TokenPage>,
      }
    : null;
  return { rateLimitCounters, proxyCacheMemory, oauth2Tokens };
}

/** The primary's side: the node's one set of counters, one memory cache, and the embedded token store if any. */
export function serveNodeStores(server: SharedCallServer, stores: { counters: LocalCounters; cache: CacheStore; tokens: OAuth2TokenStore | null }): void {
  server.register(SHARED.rateLimit, { target: stores.counters, methods: ['take', 'peek', 'add'] });
  const cache = stores.cache;
  server.register(SHARED.proxyCache, {
    target: {
      get: async (key: string) => {
        const entry = await cache.get(key);
        return entry === null ? null : toWire(entry);
      },
      set: (key: string, entry: WireResponse, storageTtl: number) => cache.set(key, fromWire(entry), storageTtl),
      delete: (key: string) => cache.delete(key),
      clear: () => cache.clear(),
    },
    methods: CACHE_METHODS,
  });
  if (stores.tokens) server.register(SHARED.oauth2Tokens, { target: stores.tokens, methods: TOKEN_METHODS });
}
