import { describe, expect, it } from '@jest/globals';
import { rateLimitingConfigSchema, rateLimitingShorthands } from './schema';

describe("rate-limiting: Kong 3.9's deprecated redis_* shorthand fields", () => {
  it('each redis_* field lands on config.redis.*, and the result validates', () => {
    const config = rateLimitingShorthands({ minute: 5, policy: 'redis', redis_host: 'cache', redis_port: 6380, redis_password: 's', redis_database: 2, redis_ssl: true, redis_timeout: 500 });
    expect(config).toEqual({ minute: 5, policy: 'redis', redis: { host: 'cache', port: 6380, password: 's', database: 2, ssl: true, timeout: 500 } });
    const parsed = rateLimitingConfigSchema.parse(config);
    expect(parsed.redis).toMatchObject({ host: 'cache', port: 6380, database: 2, ssl: true, ssl_verify: false });
  });

  it("Kong's own dumps carry both forms: a value under redis wins, a null one does not hide the shorthand", () => {
    expect(rateLimitingShorthands({ redis_host: 'old', redis_port: null, redis: { host: 'new', port: null } })).toEqual({ redis: { host: 'new', port: null } });
    expect(rateLimitingShorthands({ redis_host: 'h', redis: { host: null } })).toEqual({ redis: { host: 'h' } });
  });

  it('a config without shorthand fields is left as it is', () => {
    const config = { minute: 1 };
    expect(rateLimitingShorthands(config)).toBe(config);
  });
});
