import { describe, expect, it } from '@jest/globals';
import { fakeContext } from '../../test/support/fake-context';
import { AddressSet, addressBytes, parseCidr } from './address-trie';
import { ipRestrictionAccess } from './handler';
import { ipRestriction } from './index';
import { checkIpRestrictionConfig, ipRestrictionConfigSchema } from './schema';

const decide = (config: Record<string, unknown>, clientIp: string) => ipRestrictionAccess(fakeContext({ clientIp }).ctx, ipRestrictionConfigSchema.parse(config));

describe('ip-restriction', () => {
  it("Kong's name and priority; may be scoped to a consumer", () => {
    expect([ipRestriction.name, ipRestriction.priority, ipRestriction.noConsumer]).toEqual(['ip-restriction', 990, false]);
  });

  it('the address set matches addresses and blocks of both families, IPv4-mapped IPv6 as IPv4', () => {
    const set = new AddressSet(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '::1', '0.0.0.0/32']);
    expect(['10.255.1.1', '192.0.2.7', '2001:db8:ffff::1', '::1', '::ffff:10.1.1.1', '[::1]'].map((ip) => set.has(ip))).toEqual([true, true, true, true, true, true]);
    expect(['11.0.0.1', '192.0.2.8', '2001:db9::', '::2', 'not-an-ip', ''].map((ip) => set.has(ip))).toEqual([false, false, false, false, false, false]);
    expect(new AddressSet(['0.0.0.0/0']).has('203.0.113.9')).toBe(true);
    expect(new AddressSet(['::/0']).has('fe80::1')).toBe(true);
    expect(new AddressSet(['::/0']).has('1.2.3.4')).toBe(false);
  });

  it('parses IPv6 forms: compressed, full, embedded IPv4', () => {
    expect(Buffer.from(addressBytes('2001:db8::1')!).toString('hex')).toBe('20010db8000000000000000000000001');
    expect(Buffer.from(addressBytes('::1.2.3.4')!).toString('hex')).toBe('00000000000000000000000001020304');
    expect(Buffer.from(addressBytes('1:2:3:4:5:6:7:8')!).toString('hex')).toBe('00010002000300040005000600070008');
    expect(parseCidr('10.0.0.0/33')).toBeNull();
    expect(parseCidr('::/129')).toBeNull();
    expect(parseCidr('10.0.0.0/x')).toBeNull();
    expect(parseCidr('::ffff:10.0.0.0/104')).toEqual({ bytes: Uint8Array.from([10, 0, 0, 0]), prefix: 8 });
  });

  it('a lookup in a list of 100,000 blocks answers the same as in a short one', () => {
    const blocks = Array.from({ length: 100_000 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.0/24`);
    const set = new AddressSet(blocks);
    expect(set.size).toBe(100_000);
    expect(set.has('10.1.2.3')).toBe(true);
    expect(set.has('11.1.2.3')).toBe(false);
  });

  it("deny refuses with Kong's 403 'IP address not allowed: <ip>'; allow refuses everyone else; deny wins", () => {
    expect(decide({ deny: ['10.0.0.0/8'] }, '10.1.1.1')).toEqual({ status: 403, body: { message: 'IP address not allowed: 10.1.1.1' } });
    expect(decide({ deny: ['10.0.0.0/8'] }, '11.1.1.1')).toBeUndefined();
    expect(decide({ allow: ['10.0.0.0/8'] }, '11.1.1.1')).toEqual({ status: 403, body: { message: 'IP address not allowed: 11.1.1.1' } });
    expect(decide({ deny: ['::/0'], status: 401 }, '2001:db8::1')).toEqual({ status: 401, body: { message: 'IP address not allowed: 2001:db8::1' } });
    expect(decide({ allow: ['10.0.0.0/8'], deny: ['10.1.0.0/16'] }, '10.1.0.1')?.status).toBe(403);
    expect(decide({ allow: ['10.0.0.0/8'], deny: ['10.1.0.0/16'] }, '10.2.0.1')).toBeUndefined();
    expect(decide({ deny: ['::1'], status: 451, message: 'nope' }, '::1')).toEqual({ status: 451, body: { message: 'nope' } });
  });

  it("config rules: one list at least, entries must be addresses or blocks (Kong's messages)", () => {
    expect(checkIpRestrictionConfig(ipRestrictionConfigSchema.parse({}))).toEqual({ '@entity': ["at least one of these fields must be non-empty: 'config.allow', 'config.deny'"] });
    expect(checkIpRestrictionConfig(ipRestrictionConfigSchema.parse({ allow: [], deny: [] }))).not.toBeNull();
    expect(checkIpRestrictionConfig(ipRestrictionConfigSchema.parse({ deny: ['1.2.3.4'] }))).toBeNull();
    const bad = ipRestrictionConfigSchema.safeParse({ allow: ['1.2.3.4/40'] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toBe("invalid ip or cidr range: '1.2.3.4/40'");
  });
});
