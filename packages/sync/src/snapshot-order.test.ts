import { describe, expect, it } from '@jest/globals';
import { compareEpochs, newEpoch } from '@gatehouse/core';
import { succession } from './snapshot-order';

const A = newEpoch(null, 1_760_000_000_000);
const B = newEpoch(null, 1_760_000_000_001);

describe('succession of configs (epoch, then version)', () => {
  it.each([
    ['anything follows nothing', { version: 1, epoch: A }, null, 'newer-version'],
    ['a higher version of the same epoch', { version: 2, epoch: A }, { version: 1, epoch: A }, 'newer-version'],
    ['the same version', { version: 1, epoch: A }, { version: 1, epoch: A }, 'same'],
    ['a lower version of the same epoch', { version: 1, epoch: A }, { version: 2, epoch: A }, 'older-version'],
    ['a later epoch with a lower version', { version: 1, epoch: B }, { version: 50, epoch: A }, 'newer-epoch'],
    ['an earlier epoch with a higher version', { version: 90, epoch: A }, { version: 1, epoch: B }, 'older-epoch'],
    ['an epoch after none (older control planes)', { version: 1, epoch: A }, { version: 9 }, 'newer-epoch'],
    ['no epoch after an epoch', { version: 99 }, { version: 1, epoch: A }, 'older-epoch'],
    ['no epoch on either side: versions', { version: 3 }, { version: 2 }, 'newer-version'],
  ] as const)('%s', (_what, incoming, serving, expected) => {
    expect(succession(incoming, serving)).toBe(expected);
  });
});

describe('epochs', () => {
  it('are ordered by time, then text; malformed ones come first', () => {
    expect(compareEpochs(A, B)).toBeLessThan(0);
    expect(compareEpochs(B, A)).toBeGreaterThan(0);
    expect(compareEpochs(A, A)).toBe(0);
    expect(compareEpochs('garbage', A)).toBeLessThan(0);
    expect(compareEpochs(undefined, null)).toBe(0);
  });

  it('a new epoch made after a later one overtakes it even when the clock is behind', () => {
    const ahead = newEpoch(null, Date.now() + 3_600_000);
    const next = newEpoch(ahead);
    expect(compareEpochs(next, ahead)).toBeGreaterThan(0);
    expect(next).toMatch(/^\d{13}-[0-9a-f]{16}$/);
  });
});
