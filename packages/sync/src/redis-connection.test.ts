import { describe, expect, it } from '@jest/globals';
import { sentinelOptions } from './redis-connection';

describe('REDIS_URL Sentinel form', () => {
  it('reads sentinels, master name, password and db', () => {
    expect(sentinelOptions('redis+sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26380/mymaster/2')).toEqual({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
      ],
      name: 'mymaster',
      db: 2,
      password: 's3cret',
      sentinelPassword: 's3cret',
    });
    expect(sentinelOptions('rediss+sentinel://sentinel.internal:26379/m')).toMatchObject({ name: 'm', enableTLSForSentinelMode: true });
  });

  it('leaves other URLs to ioredis and refuses a malformed Sentinel URL', () => {
    expect(sentinelOptions('redis://127.0.0.1:6379/0')).toBeNull();
    expect(() => sentinelOptions('redis+sentinel://host-without-port/m')).toThrow(/host:port/);
    expect(() => sentinelOptions('redis+sentinel://h:1')).toThrow(/Sentinel URL/);
  });
});
