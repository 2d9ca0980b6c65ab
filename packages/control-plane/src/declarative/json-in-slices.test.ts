import { describe, expect, it } from '@jest/globals';
import { HttpError } from '@gatehouse/core';
import { jsonObjectSteps } from './json-in-slices';
import { runAtOnce } from './slices';

/** what JSON.parse gives for a text, or undefined when it throws */
function whole(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

describe('jsonObjectSteps', () => {
  it.each([
    '{}',
    ' {\n } \n',
    '{"a":1}',
    '{"a":[]}',
    '{"a":[1,2,{"x":[3]}],"b":"s\\"t]","c":null,"d":{"e":[1]},"f":-1.5e3}',
    '{"k":[ "x" , {"y":"}"} ] }',
    '{"a":"\\u0041\\\\"}',
    '{"a":1,"a":[2]}',
  ])('reads %j as JSON.parse does', (text) => {
    expect(runAtOnce(jsonObjectSteps(text))).toEqual(whole(text));
  });

  it('keeps __proto__ an own property, as JSON.parse does', () => {
    const doc = runAtOnce(jsonObjectSteps('{"__proto__":{"polluted":true},"a":[1]}'))!;
    expect(Object.getPrototypeOf(doc)).toBe(Object.prototype);
    expect(Object.keys(doc)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each(['{"a":1,}', '{"a":[1,]}', '{"a" 1}', '{"a":1} x', '{"a":[1 2]}', '{"a":01}', '{"a":[{"b":}]}', '{"a":"open', '[1]', '{"a":[1'])(
    'gives undefined for %j, which is left to the whole-text reader',
    (text) => {
      expect(runAtOnce(jsonObjectSteps(text))).toBeUndefined();
    },
  );

  it('bounds nesting as the body guard does: 64 levels pass, 65 answer 400', () => {
    const nested = (levels: number) => `{"a":[${'['.repeat(levels - 2)}${']'.repeat(levels - 2)}]}`;
    expect(runAtOnce(jsonObjectSteps(nested(64)))).toEqual(JSON.parse(nested(64)));
    expect(() => runAtOnce(jsonObjectSteps(nested(65)))).toThrow(HttpError);
  });

  it('gives the event loop turns through a large document', () => {
    const item = JSON.stringify({ username: 'u', tags: ['x'.repeat(1000)] });
    const text = `{"_format_version":"3.0","consumers":[${Array.from({ length: 5000 }, () => item).join(',')}]}`;
    const steps = jsonObjectSteps(text);
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields++;
    expect(yields).toBeGreaterThanOrEqual(4);
    expect(step.value).toEqual(JSON.parse(text));
  });
});
