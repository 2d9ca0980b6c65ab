import { describe, expect, it } from '@jest/globals';
import { httpLogConfigSchema } from '../http-log/schema';
import { jweDecryptConfigSchema } from '../jwe-decrypt/schema';
import { requestTransformerConfigSchema } from '../request-transformer/schema';
import { responseTransformerConfigSchema } from '../response-transformer/schema';
import { isFramingHeader } from './header-fields';

const FRAMING = ['Connection', 'Keep-Alive', 'Proxy-Authorization', 'proxy-connection', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade', 'Content-Length'];

/** the issues of a parse, as `path: message` */
function issues(result: { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } }): string[] {
  return (result.error?.issues ?? []).map((issue) => `${issue.path.map(String).join('.')}: ${issue.message}`);
}

describe('plugin configs never set hop-by-hop or framing headers (decision 32)', () => {
  it('the framing headers, in any case', () => {
    for (const name of FRAMING) expect([name, isFramingHeader(name), isFramingHeader(name.toUpperCase())]).toEqual([name, true, true]);
    for (const name of ['Host', 'X-Connection', 'Content-Type', 'Trailers-X', 'Proxy']) expect([name, isFramingHeader(name)]).toEqual([name, false]);
  });

  it('request-transformer: add, append, replace and the new name of a rename, naming the element', () => {
    for (const section of ['add', 'append', 'replace']) {
      const result = requestTransformerConfigSchema.safeParse({ [section]: { headers: ['x-ok:1', 'Transfer-Encoding:chunked'] } });
      expect(issues(result)).toEqual([`${section}.headers.1: 'Transfer-Encoding' is a hop-by-hop or framing header: a plugin may not set it`]);
    }
    expect(issues(requestTransformerConfigSchema.safeParse({ rename: { headers: ['x-len:Content-Length'] } }))).toEqual([
      "rename.headers.0: 'Content-Length' is a hop-by-hop or framing header: a plugin may not set it",
    ]);
    // removing one, renaming one away, or the same names in the body or query string are not setting headers
    expect(requestTransformerConfigSchema.safeParse({ remove: { headers: ['Connection'] }, rename: { headers: ['Connection:x-conn'] }, add: { body: ['connection:x'], querystring: ['te:1'] } }).success).toBe(true);
    // a value without a colon keeps its own message
    expect(issues(requestTransformerConfigSchema.safeParse({ add: { headers: ['Connection'] } }))).toEqual(['add.headers.0: invalid value: Connection']);
  });

  it('response-transformer: the same rules on the client response', () => {
    expect(issues(responseTransformerConfigSchema.safeParse({ add: { headers: ['connection:close'] }, rename: { headers: ['x-a:Upgrade'] } }))).toEqual([
      "rename.headers.0: 'Upgrade' is a hop-by-hop or framing header: a plugin may not set it",
      "add.headers.0: 'connection' is a hop-by-hop or framing header: a plugin may not set it",
    ]);
    expect(responseTransformerConfigSchema.safeParse({ remove: { headers: ['Connection'] }, add: { headers: ['x-a:1'] } }).success).toBe(true);
  });

  it('jwe-decrypt forward_header_name and http-log headers', () => {
    expect(issues(jweDecryptConfigSchema.safeParse({ key_sets: ['a'], forward_header_name: 'Keep-Alive' }))).toEqual([
      "forward_header_name: 'Keep-Alive' is a hop-by-hop or framing header: a plugin may not set it",
    ]);
    expect(issues(httpLogConfigSchema.safeParse({ http_endpoint: 'http://log.test', headers: { 'Proxy-Authorization': 'x' } }))).toEqual([
      "headers: 'Proxy-Authorization' is a hop-by-hop or framing header: a plugin may not set it",
    ]);
    expect(issues(httpLogConfigSchema.safeParse({ http_endpoint: 'http://log.test', headers: { 'Content-Length': '1' } }))).toEqual(['headers: cannot contain Host, Content-Length or Content-Type']);
  });
});
