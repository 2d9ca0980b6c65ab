import { describe, expect, it } from '@jest/globals';
import { listener } from './root';

describe("Kong's listener entries of GET /", () => {
  it('reads the address and the flags of a listen spec', () => {
    expect(listener('0.0.0.0:8443 http2 ssl reuseport backlog=16384')).toEqual({
      ip: '0.0.0.0',
      port: 8443,
      ssl: true,
      http2: true,
      proxy_protocol: false,
      deferred: false,
      reuseport: true,
      backlog: 16384,
      listener: '0.0.0.0:8443 http2 ssl reuseport backlog=16384',
    });
  });

  it('a bare address is plain HTTP; an IPv6 address keeps its brackets', () => {
    expect(listener('127.0.0.1:8000')).toMatchObject({ ip: '127.0.0.1', port: 8000, ssl: false, http2: false, backlog: null, listener: '127.0.0.1:8000' });
    expect(listener('[::1]:8443 ssl')).toMatchObject({ ip: '[::1]', port: 8443, ssl: true, listener: '[::1]:8443 ssl' });
  });
});
