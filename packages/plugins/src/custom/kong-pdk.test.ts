import { describe, expect, it } from '@jest/globals';
import { kongPdkPlugin } from './kong-pdk';

describe('kong-pdk plugins: phases', () => {
  it("gives the rewrite method a hook of its own (run for the global configuration only), not a part of access", () => {
    class Both {
      rewrite(): void {}
      access(): void {}
    }
    class RewriteOnly {
      rewrite(): void {}
    }
    const both = kongPdkPlugin('both', { Plugin: Both });
    expect([typeof both.rewrite, typeof both.access]).toEqual(['function', 'function']);
    const rewriteOnly = kongPdkPlugin('rewrite-only', { Plugin: RewriteOnly });
    expect([typeof rewriteOnly.rewrite, rewriteOnly.access]).toEqual(['function', undefined]);
  });
});
