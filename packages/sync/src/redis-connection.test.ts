import { describe, expect, it } from '@jest/globals';
import { clusterAddress, keyPrefixFor, sentinelOptions } from './redis-connection';

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

describe('REDIS_URL Cluster form', () => {
  it('reads the seed nodes and credentials', () => {
    expect(clusterAddress('redis+cluster://:pw@10.0.0.1:7000,10.0.0.2:7001')).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      nodeOptions: { password: 'pw' },
    });
    expect(clusterAddress('rediss+cluster://app:s%40cret@redis-0:6379/')).toEqual({ nodes: [{ host: 'redis-0', port: 6379 }], nodeOptions: { username: 'app', password: 's@cret', tls: {} } });
    expect(clusterAddress('redis://127.0.0.1:6379')).toBeNull();
    expect(() => clusterAddress('redis+cluster://h:1/2')).toThrow(/no database number/);
    expect(() => clusterAddress('redis+cluster://h')).toThrow(/host:port/);
  });

  it('wraps the key prefix in a hash tag for a cluster only', () => {
    expect(keyPrefixFor('redis+cluster://h:1', 'gatehouse:')).toBe('{gatehouse:}');
    expect(keyPrefixFor('redis+cluster://h:1', '{app}:gh:')).toBe('{app}:gh:');
    expect(keyPrefixFor('redis://h:1', 'gatehouse:')).toBe('gatehouse:');
    expect(keyPrefixFor(null, 'gatehouse:')).toBe('gatehouse:');
  });
});
