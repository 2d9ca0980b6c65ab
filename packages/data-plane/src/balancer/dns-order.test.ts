import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestDnsServer, type TestDnsServer } from '@gatehouse/testkit';
import { parseDnsOrder, SystemResolver } from './dns';
import { dnsStatistics } from './dns-stats';

let dns: TestDnsServer;

beforeAll(async () => {
  dns = await startTestDnsServer();
  dns.set('a.srv.test', [{ address: '127.0.0.2', ttl: 7 }]);
  dns.set('b.srv.test', [{ address: '127.0.0.3', ttl: 7 }]);
  dns.set('_http._tcp.api.srv.test', [
    { address: '', srv: { priority: 10, weight: 10, port: 8001, target: 'a.srv.test' } },
    { address: '', srv: { priority: 10, weight: 0, port: 8002, target: 'b.srv.test' } },
    { address: '', srv: { priority: 20, weight: 50, port: 8003, target: 'a.srv.test' } },
  ]);
  // a name with both kinds of record
  dns.set('both.srv.test', [
    { address: '127.0.0.9', ttl: 7 },
    { address: '', srv: { priority: 1, weight: 5, port: 9001, target: 'a.srv.test' } },
  ]);
});

afterAll(async () => {
  await dns?.close();
});

describe("dns_order and SRV records (Kong's DNS client)", () => {
  it("reads Kong's dns_order, refusing an unknown type", () => {
    expect(parseDnsOrder(undefined)).toEqual(['LAST', 'SRV', 'A', 'CNAME']);
    expect(parseDnsOrder('a, srv')).toEqual(['A', 'SRV']);
    expect(() => parseDnsOrder('LAST,MX')).toThrow("dns_order: invalid entry 'MX' (LAST, SRV, A, AAAA, CNAME)");
  });

  it('SRV: the addresses of the lowest priority records, with their ports and weights (0 counts as 1)', async () => {
    const resolver = new SystemResolver([dns.address]);
    const answers = await resolver.resolve('_http._tcp.api.srv.test');
    expect(answers.sort((x, y) => x.address.localeCompare(y.address))).toEqual([
      { address: '127.0.0.2', family: 4, ttl: 7, srv: { port: 8001, weight: 10 } },
      { address: '127.0.0.3', family: 4, ttl: 7, srv: { port: 8002, weight: 1 } },
    ]);
    expect(dnsStatistics()['_http._tcp.api.srv.test|SRV']).toMatchObject({ runs: 1, query: 1, query_succ: 1 });
  });

  it('the first type of the order that answers wins', async () => {
    expect(await new SystemResolver([dns.address]).resolve('both.srv.test')).toEqual([{ address: '127.0.0.2', family: 4, ttl: 7, srv: { port: 9001, weight: 5 } }]);
    expect(await new SystemResolver([dns.address], parseDnsOrder('A,SRV')).resolve('both.srv.test')).toEqual([{ address: '127.0.0.9', family: 4, ttl: 7 }]);
    // a name without SRV records falls through to A
    expect(await new SystemResolver([dns.address]).resolve('b.srv.test')).toEqual([{ address: '127.0.0.3', family: 4, ttl: 7 }]);
    // without SRV in the order an SRV-only name does not resolve
    await expect(new SystemResolver([dns.address], parseDnsOrder('A')).resolve('_http._tcp.api.srv.test')).rejects.toThrow();
  });

  it('LAST asks first the type that answered last for the name', async () => {
    const resolver = new SystemResolver([dns.address], parseDnsOrder('LAST,SRV,A'));
    await resolver.resolve('b.srv.test');
    const before = dnsStatistics()['b.srv.test|SRV']?.query ?? 0;
    expect(await resolver.resolve('b.srv.test')).toEqual([{ address: '127.0.0.3', family: 4, ttl: 7 }]);
    expect(dnsStatistics()['b.srv.test|SRV']?.query ?? 0).toBe(before);
  });
});
