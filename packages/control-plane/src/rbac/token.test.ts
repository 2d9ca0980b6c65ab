import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { generateToken, hashToken, normalizeToken, tokenCacheKey, tokenIdent, verifyToken } from './token';
import { TokenCache } from './token-cache';

describe('token storage', () => {
  it('ident is the first 5 hex characters of SHA-1(token)', () => {
    expect(tokenIdent('my-token')).toBe(createHash('sha1').update('my-token').digest('hex').slice(0, 5));
    expect(tokenIdent('my-token')).toMatch(/^[0-9a-f]{5}$/);
  });

  it('whitespace is removed before hashing, identing and comparing', async () => {
    expect(normalizeToken(' a b\tc\n')).toBe('abc');
    expect(tokenIdent(' abc ')).toBe(tokenIdent('abc'));
    const hash = await hashToken('ab c');
    expect(await verifyToken('abc', hash)).toBe(true);
  });

  it('hashes with bcrypt cost 9 and verifies only the right token', async () => {
    const hash = await hashToken('secret-1');
    expect(hash).toMatch(/^\$2b\$09\$.{53}$/);
    expect(hash).not.toContain('secret-1');
    expect(await verifyToken('secret-1', hash)).toBe(true);
    expect(await verifyToken('secret-2', hash)).toBe(false);
  });

  it('a malformed stored hash never verifies', async () => {
    expect(await verifyToken('x', 'x')).toBe(false);
    expect(await verifyToken('x', '$2b$09$short')).toBe(false);
  });

  it('generates distinct 32-character URL-safe tokens', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(a).not.toBe(b);
  });

  it('the cache key is a sha256 digest, not the token', () => {
    expect(tokenCacheKey('t')).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenCacheKey('t')).not.toContain('t'.repeat(2));
  });
});

describe('TokenCache', () => {
  it('expires entries after the ttl', () => {
    let now = 1000;
    const cache = new TokenCache(30_000, 10, () => now);
    cache.set('k', { userId: 'u', storedHash: 'h' });
    expect(cache.get('k')).toEqual({ userId: 'u', storedHash: 'h' });
    now += 29_999;
    expect(cache.get('k')).toBeDefined();
    now += 1;
    expect(cache.get('k')).toBeUndefined();
  });

  it('drops the oldest entry when full, and clears', () => {
    const cache = new TokenCache(30_000, 2);
    cache.set('a', { userId: 'a', storedHash: 'h' });
    cache.set('b', { userId: 'b', storedHash: 'h' });
    cache.set('c', { userId: 'c', storedHash: 'h' });
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('c')?.userId).toBe('c');
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
