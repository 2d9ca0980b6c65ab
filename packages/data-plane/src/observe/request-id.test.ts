import { describe, expect, it } from '@jest/globals';
import { newRequestId } from './request-id';

describe('newRequestId', () => {
  it('gives 32 lower-case hex characters, never the same twice, across several draws of random bytes', () => {
    // 10,000 ids span more than two draws of the pool (4,096 ids each)
    const ids = Array.from({ length: 10_000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
