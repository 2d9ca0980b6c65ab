import { describe, expect, it } from '@jest/globals';
import { fakeContext } from '../../test/support/fake-context';
import { requestTransformerAccess } from './handler';
import { requestTransformerConfigSchema } from './schema';

const captures = { whole: '/requests/user1/foo/user2/bar', start: 0, unnamed: ['foo', 'bar'], named: { user1: 'foo', user2: 'bar' } };

function transform(config: unknown, request: Parameters<typeof fakeContext>[0] = {}) {
  const { ctx, recorded } = fakeContext(request);
  const withCaptures = { ...ctx, req: { ...ctx.req, uriCaptures: captures } };
  const result = requestTransformerAccess(withCaptures, requestTransformerConfigSchema.parse(config));
  return { result, recorded };
}

describe('request-transformer templates', () => {
  it('renders uri captures, headers and query arguments', () => {
    const { recorded } = transform(
      { add: { querystring: ['uri_param1:$(uri_captures.user1)', 'uri_param2:$(headers.host)'], headers: ["x-test-header:$(query_params.q1 or 'none')"] }, replace: { uri: '/requests$(uri_captures[0])' } },
      { headers: { host: 'test15.test' }, query: 'q1=20' },
    );
    expect(recorded.query?.get('uri_param1')).toBe('foo');
    expect(recorded.query?.get('uri_param2')).toBe('test15.test');
    expect(recorded.headers.get('x-test-header')).toBe('20');
    expect(recorded.path).toBe('/requests/requests/user1/foo/user2/bar');
  });

  it('renders a default for a missing value, and an escaped template literally', () => {
    const { recorded } = transform({ add: { querystring: ["a:$(query_params.none or 'default1')", "q1:$('$(uri_captures.user1)')", 'b:$(query_params.none)'] } });
    expect(recorded.query?.get('a')).toBe('default1');
    expect(recorded.query?.get('q1')).toBe('$(uri_captures.user1)');
    expect(recorded.query?.get('b')).toBe('');
  });

  it('fails on a rendering error, a syntax error, a write, or a library outside the template environment', () => {
    for (const value of ['$(ERROR())', '$(10 * uri_captures.user1)', '$(shared.written = true)', '$(string.sub(query_params.q, 1, 3))']) {
      expect(() => transform({ add: { querystring: [`q:${value}`] } }, { query: 'q=abcd' })).toThrow('[request-transformer] failed to render the template');
    }
  });

  it('has type in the environment, and headers by any case', () => {
    const { recorded } = transform({ add: { headers: ['X-Foo-Transformed:$(type(headers["X-Foo"]) == "table" and headers["X-Foo"][1] .. "-first" or headers["X-Foo"])'] } }, { headers: { 'x-foo': ['1', '2'] } });
    expect(recorded.headers.get('x-foo-transformed')).toBe('1-first');
  });
});
