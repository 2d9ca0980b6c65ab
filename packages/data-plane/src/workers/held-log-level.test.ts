import { describe, expect, it } from '@jest/globals';
import { HeldLogLevel } from './held-log-level';

describe('a run-time log level for the proxy workers', () => {
  it('is held for what is left of its timeout, and until the next change with 0', () => {
    let now = 1_000_000;
    const realNow = Date.now;
    Date.now = () => now;
    try {
      const held = new HeldLogLevel();
      expect(held.now()).toBeNull();
      expect(held.set('debug', 60)).toEqual({ gatehouse: 'log-level', level: 'debug', timeout: 60 });
      now += 45_000;
      expect(held.now()).toEqual({ gatehouse: 'log-level', level: 'debug', timeout: 15 });
      now += 15_000;
      expect(held.now()).toBeNull();
      held.set('error', 0);
      now += 86_400_000;
      expect(held.now()).toEqual({ gatehouse: 'log-level', level: 'error', timeout: 0 });
    } finally {
      Date.now = realNow;
    }
  });
});
