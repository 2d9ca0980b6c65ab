import { describe, expect, it } from '@jest/globals';
import { perConfig } from './per-config';

describe('perConfig', () => {
  it('builds once per config object and again for another object', () => {
    let builds = 0;
    const derive = perConfig((config: { n: number }) => ({ doubled: config.n * 2, build: ++builds }));
    const a = { n: 2 };
    expect(derive(a)).toBe(derive(a));
    expect(derive(a).doubled).toBe(4);
    expect(derive({ n: 2 }).build).toBe(2);
    expect(builds).toBe(2);
  });
});
