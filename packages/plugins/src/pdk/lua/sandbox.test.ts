import { describe, expect, it } from '@jest/globals';
import { fakeContext } from '../../../test/support/fake-context';
import { newExchange } from '../exchange';
import { LuaSandbox } from './sandbox';
import { LuaRunError } from './vm';

const logger = { error: () => undefined };
const sandbox = new LuaSandbox();

function run(source: string, request: Parameters<typeof fakeContext>[0] = {}) {
  const { ctx, recorded } = fakeContext(request);
  const ex = newExchange(ctx, 'access', 'pre-function', logger);
  const answer = sandbox.runSnippet(sandbox.compile(source), ex);
  return { answer, recorded, ex };
}

describe('Lua sandbox', () => {
  it('sets an upstream header through kong.service.request', () => {
    const { recorded } = run('kong.service.request.set_header("x-foo", kong.request.get_header("X_Bar") .. "!")', { headers: { 'x-bar': 'baz' } });
    expect(recorded.headers.get('x-foo')).toBe('baz!');
  });

  it('ends the request with kong.response.exit', () => {
    const { answer } = run('return kong.response.exit(406, { message = "Invalid" }, { ["X-A"] = "b" })');
    expect(answer).toEqual({ status: 406, body: { message: 'Invalid' }, headers: { 'X-A': 'b' } });
  });

  it('ngx.status then ngx.exit answers with Kong\'s default message', () => {
    expect(run('ngx.status = 400 ngx.exit(ngx.status)').answer).toEqual({ status: 400, body: { message: 'Bad request' } });
  });

  it('keeps the function a snippet returns, with its upvalues', () => {
    const source = 'local n = 0 return function() n = n + 1 ngx.say(n) ngx.exit(200) end';
    expect(run(source).answer?.body).toBe('1\n');
    expect(run(source).answer?.body).toBe('2\n');
  });

  it('refuses io, os.execute, require, load and debug', () => {
    for (const code of ['io.open("/etc/passwd")', 'os.execute("true")', 'require("os")', 'load("return 1")()', 'debug.getinfo(1)', 'string.rep("x", 10)', '("x"):rep(10)']) {
      expect(() => run(code)).toThrow(LuaRunError);
    }
    expect(() => run('require("inspect")')).toThrow("require 'inspect' not allowed within sandbox");
  });

  it('names an unsupported PDK function', () => {
    expect(() => run('kong.cache:get("x")')).toThrow('unsupported function: kong.cache');
  });

  it('stops a snippet that loops forever', () => {
    expect(() => run('while true do end')).toThrow(/budget exceeded/);
  });

  it('stops a snippet that allocates without end', () => {
    expect(() => run('local t = {} local s = "xxxxxxxxxxxxxxxx" while true do s = s .. s t[#t + 1] = s end')).toThrow(/budget exceeded|memory/);
  });

  it('matches with ngx.re in linear time', () => {
    const { answer } = run('local m = ngx.re.match("/users/42", [[/users/(?P<id>\\d+)]]) local from, to = ngx.re.find("abc42", "[0-9]+") return kong.response.exit(200, m[0] .. "|" .. m.id .. "|" .. from .. "-" .. to)');
    expect(answer?.body).toBe('/users/42|42|4-5');
  });
});
