import { describe, expect, it } from '@jest/globals';
import { hashPassword as prepareCredential } from './entities';
import { matchesKongDigest, verifyPassword } from './password';

// Kong's stored form (kong/plugins/basic-auth/crypto.lua): hex SHA-1 of the password followed by the consumer id;
// the digests below were computed outside this code (`printf %s password consumer_id | sha1sum`)
const CONSUMER = '5e2ce1a9-3b4e-4c77-9d1a-0123456789ab';
const DIGEST = '28c918af03da3c533ca69be7745206fc905a024d';

describe("basic-auth: Kong's stored digests", () => {
  it('a Kong digest verifies the password with the consumer id as salt, and nothing else', async () => {
    expect(matchesKongDigest('kong-password', DIGEST, CONSUMER)).toBe(true);
    expect(await verifyPassword('kong-password', DIGEST, CONSUMER)).toBe(true);
    expect(await verifyPassword('kong-password', DIGEST, 'c0ffee00-dead-beef-0000-000000000001')).toBe(false);
    expect(await verifyPassword('other', DIGEST, CONSUMER)).toBe(false);
    // without the consumer a digest is no bcrypt hash: refused
    expect(await verifyPassword('kong-password', DIGEST)).toBe(false);
  });

  it('_transform: false keeps the value as given; otherwise it is hashed', async () => {
    expect((await prepareCredential({ username: 'u', password: DIGEST }, null, { transform: false })).password).toBe(DIGEST);
    expect((await prepareCredential({ username: 'u', password: DIGEST }, null)).password).toMatch(/^\$2b\$/);
  });

  it('a password applied again in clear keeps the stored hash when it verifies, and is hashed anew when it does not', async () => {
    const stored = (await prepareCredential({ username: 'u', password: 'pw' }, null)).password as string;
    expect((await prepareCredential({ username: 'u', password: 'pw' }, { password: stored })).password).toBe(stored);
    const changed = (await prepareCredential({ username: 'u', password: 'new' }, { password: stored })).password as string;
    expect(changed).not.toBe(stored);
    expect(await verifyPassword('new', changed)).toBe(true);
  });
});
