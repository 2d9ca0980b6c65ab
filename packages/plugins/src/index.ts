export * from './contract';
export { declareIndex, type CredentialIndexDeclaration, type DeclaredIndex } from './shared/credential-index';
export * from './bundled';
export * from './key-auth/schema';
export * from './key-auth/entities';
export { keyAuth } from './key-auth';
export { keyAuthIndex, type KeyAuthIndex } from './key-auth/credential-index';
export * from './basic-auth/schema';
export * from './basic-auth/entities';
export { basicAuth } from './basic-auth';
export { basicAuthIndex, type BasicAuthIndex } from './basic-auth/credential-index';
export { VerifiedCredentialCache } from './basic-auth/verified-cache';
export * from './request-termination/schema';
export { requestTermination } from './request-termination';
export * from './jwe-decrypt/schema';
export { buildKeyIndex as buildJweKeyIndex, type JweKeyIndex } from './jwe-decrypt/key-index';
export { jweDecrypt } from './jwe-decrypt';
export * from './jwt/schema';
export * from './jwt/entities';
export { jwt } from './jwt';
export { jwtIndex, JwtCredential, type JwtIndex } from './jwt/credential-index';
export * from './hmac-auth/schema';
export * from './hmac-auth/entities';
export { hmacAuth } from './hmac-auth';
export { hmacAuthIndex, type HmacAuthIndex, type HmacCredential } from './hmac-auth/credential-index';
export * from './acl/schema';
export * from './acl/entities';
export { acl } from './acl';
export { aclIndex, type AclIndex, type ConsumerGroups } from './acl/group-index';
export * from './ldap-auth/schema';
export { ldapAuth } from './ldap-auth';
export { ldapAuthAuthenticate, sharedLdapAuthRuntime, LDAP_AUTH_RUNTIME, type LdapAuthRuntime } from './ldap-auth/handler';
export { LdapConnections, type LdapBinder, type LdapServer } from './ldap-auth/connections';
export { BindCache } from './ldap-auth/bind-cache';
export { parseLdapAuthorization, bindDn } from './ldap-auth/credentials';
export * from './rate-limiting/schema';
export { rateLimiting } from './rate-limiting';
export { AddressSet } from './ip-restriction/address-trie';
export { createRateLimiter, type RateLimiterOptions } from './rate-limiting/handler';
export { LocalCounters } from './rate-limiting/local-counters';
export type { PeriodLimit, Tally } from './rate-limiting/tally';
export { RedisConnections } from './rate-limiting/redis-connections';
export { windowOf, type CountingWindow } from './rate-limiting/windows';
export * from './oauth2/schema';
export * from './oauth2/entities';
export { oauth2, oauth2EndpointOf } from './oauth2';
export { oauth2Index, type OAuth2Client, type OAuth2Index } from './oauth2/credential-index';
export {
  presentToken as presentOAuth2Token,
  listOAuth2Tokens,
  findOAuth2Token,
  tokenDigest as oauth2TokenDigest,
  decodeCursor as decodeOAuth2TokenCursor,
  type TokenStore as OAuth2TokenStore,
  type OAuth2Token,
  type AuthorizationCode as OAuth2AuthorizationCode,
  type TokenPage as OAuth2TokenPage,
} from './oauth2/token-store';
export { MemoryTokenStore } from './oauth2/memory-token-store';
export { RedisTokenStore } from './oauth2/redis-token-store';
export { redisTokenStore, oauth2RedisPrefix, purgeClearOAuth2Tokens, tokenStoreOf } from './oauth2/runtime-store';
export { hashSecret, isHashedSecret, verifyHashedSecret } from './oauth2/secret';
export { readLimitedBody, parseByteSize, BodyTooLargeError, BODY_TOO_LARGE, DEFAULT_MAX_BUFFERED_BODY, maxBufferedBody, REQUEST_TOO_LARGE, requestTooLarge } from './shared/limited-body';
export { MemoryCacheStore, RedisCacheStore, clearRedisCache, redisCacheKey, type CacheStore, type CachedResponse } from './proxy-cache/stores';
export { PROXY_CACHE_MEMORY_BYTES } from './proxy-cache/handler';
export { proxyCachePurgeChannel, applyPurgeMessage, localCacheAdmin, redisCacheAdmin, type ProxyCacheAdmin } from './proxy-cache/purge';
export * from './prometheus/schema';
export { prometheus } from './prometheus';
export * from './correlation-id/schema';
export { correlationId } from './correlation-id';
export * from './file-log/schema';
export { fileLog } from './file-log';
export * from './http-log/schema';
export { httpLog } from './http-log';
export { BatchQueue, type BatchHandler, type QueueSpec, type QueueStats, type QueueLogger } from './shared/queue';
export { PluginQueues } from './shared/plugin-queues';
export { queueSchema, queueSchemaWith, queueField, pluginQueueConfig, queueConfigOf, type QueueConfig, type LegacyQueueFields } from './shared/queue-schema';
export { queuesFor, queueLogger } from './shared/runtime-queues';
export { AppendLog, type AppendLogOptions } from './shared/append-log';
export { serializeExchange, queryTable, type SerializedExchange } from './shared/log-serializer';
export { openTelemetryConfigSchema, type OpenTelemetryConfig } from './opentelemetry/schema';
export { openTelemetry, closeOpenTelemetryExporters } from './opentelemetry';
export { zipkinConfigSchema, type ZipkinConfig } from './zipkin/schema';
export { zipkin, closeZipkinExporters } from './zipkin';
export { RequestSpans, SpanKind, nowMs, parseTracingInstrumentations, INSTRUMENTATION_TYPES, type InstrumentationType, type RecordedSpan, type TracingSettings } from './shared/tracing/request-spans';
export { openPlugins } from './open-plugins';
export { runtimeState, type RuntimeState } from './shared/runtime-state';
export { luaSandbox, LuaSandbox } from './pdk/lua/sandbox';
export { parseUntrustedLua, setUntrustedLua, untrustedLua, UNTRUSTED_LUA_DEFAULT, UNTRUSTED_LUA_OFF_MESSAGE, type UntrustedLuaOptions } from './pdk/lua/untrusted-lua';
export { newExchange, type PdkExchange, type PdkPhase } from './pdk/exchange';
export { loadCustomPlugins } from './custom/load-plugins';
/** the schema library of the plugin contract, for custom plugins */
export { z } from 'zod';
export { kongPdkPlugin, type KongPdkModule } from './custom/kong-pdk';
export { acme, processChallenges, redisChallenges, coversDomain, acmeConfigSchema, acmeIndex, onDemandCertificates, processOrders, redisOrders, type AcmeChallengeStore, type AcmeConfig, type AcmeOrderChannel } from './acme';
export { STREAM_PROTOCOL_PLUGINS, pluginProtocolsSchema } from './shared/stream-plugins';
export { serializeSession, type SerializedSession } from './shared/session-serializer';
export { setTrustedCaBundle, trustedCaBundle } from './shared/trusted-cas';
