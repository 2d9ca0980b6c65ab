import { describe, expect, it } from '@jest/globals';
import { InterceptedResponse } from './response-interception';

const raw = (...pairs: string[]) => pairs.map((p) => Buffer.from(p, 'latin1'));

describe('the upstream response the hooks see', () => {
  it("plugin-set headers replace the upstream's, whose own values stay readable in `replaced`", () => {
    const res = new InterceptedResponse(200, raw('Vary', 'Accept-Encoding', 'vary', 'Accept-Language', 'X-Kept', '1', 'Connection', 'close'), new Map([['vary', 'Origin']]));
    expect(res.headers).toEqual({ 'x-kept': '1', vary: 'Origin' });
    expect(res.replaced).toEqual({ vary: ['Accept-Encoding', 'Accept-Language'] });
    expect(res.setByPlugins).toEqual(new Set(['vary']));
  });

  it('without plugin headers nothing is replaced', () => {
    const res = new InterceptedResponse(200, raw('Vary', 'Accept-Encoding'), null);
    expect([res.headers, res.replaced, res.setByPlugins]).toEqual([{ vary: 'Accept-Encoding' }, undefined, undefined]);
  });
});
