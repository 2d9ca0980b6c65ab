/**
 * interface.md "Administrative interface (RBAC)": only a hash of the user_token is stored and returned. The plain
 * token is never stored (every table is searched), never logged (the app's logger and the console are captured,
 * an infrastructure fault included) and never returned after the response that created it.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startRbacAdmin, type RbacHarness } from './support/rbac-harness';

jest.setTimeout(60_000);

const BOOT = 'bootstrap-plain-token-4b9e1c';
const USER_TOKEN = 'user-plain-token-7d3a2f';
const NEW_TOKEN = 'user-rotated-token-91ce55';

let h: RbacHarness;
const consoleLines: string[] = [];
const spies: Array<{ mockRestore(): void }> = [];
const responses: string[] = [];
let generated = '';

async function everyStoredValue(): Promise<string> {
  const tables = await h.database.db.introspection.getTables();
  expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['rbac_users', 'admins']));
  const dumps: string[] = [];
  for (const table of tables) dumps.push(JSON.stringify(await h.database.db.selectFrom(table.name).selectAll().execute()));
  return dumps.join('\n');
}

beforeAll(async () => {
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    spies.push(jest.spyOn(console, method).mockImplementation((...args: unknown[]) => void consoleLines.push(args.map(String).join(' '))));
  }
  h = await startRbacAdmin({ mode: 'on', adminToken: BOOT });
  const t = (req: ReturnType<ReturnType<RbacHarness['http']>['get']>) => req.set('Kong-Admin-Token', BOOT);
  const record = (res: { status: number; text: string }) => {
    responses.push(res.text);
    return res;
  };
  // creation: the only response allowed to hold nothing but the hash either
  const created = await h.http().post('/rbac/users').set('Kong-Admin-Token', BOOT).type('form').send(`name=keeper&user_token=${USER_TOKEN}`);
  expect(created.status).toBe(201);
  responses.push(created.text);
  await h.http().post('/rbac/users/keeper/roles').set('Kong-Admin-Token', BOOT).send({ roles: 'read-only' });
  // use the tokens, rightly and wrongly
  record(await h.http().get('/services').set('Kong-Admin-Token', USER_TOKEN));
  record(await h.http().post('/services').set('Kong-Admin-Token', USER_TOKEN).send({ name: 'x', url: 'http://x.test' }));
  record(await h.http().get('/services').set('Kong-Admin-Token', `${USER_TOKEN}-wrong`));
  record(await h.http().post('/rbac/users').set('Kong-Admin-Token', BOOT).send({ name: 'dup', user_token: USER_TOKEN }));
  record(await h.http().patch('/rbac/users/keeper').set('Kong-Admin-Token', BOOT).send({ user_token: NEW_TOKEN }));
  // a PATCH without user_token: the generated token is shown in that response only
  const rotated = await h.http().patch('/rbac/users/keeper').set('Kong-Admin-Token', BOOT).send({ comment: 'rotated' });
  generated = rotated.body.generated_user_token;
  expect(generated).toBeTruthy();
  for (const path of ['/rbac/users', '/rbac/users/keeper', '/rbac/users/keeper/roles', '/rbac/users/gatehouse-admin', '/rbac/roles/keeper', '/rbac/users/keeper/permissions', '/admins']) {
    record(await t(h.http().get(path)));
  }
  record(await h.http().get('/services').set('Kong-Admin-Token', generated));
});

afterAll(async () => {
  for (const spy of spies) spy.mockRestore();
});

describe('the plain token', () => {
  it('is stored nowhere: no table holds the bootstrap, given or generated token', async () => {
    const stored = await everyStoredValue();
    expect(stored).toContain('$2b$09$');
    for (const token of [BOOT, USER_TOKEN, NEW_TOKEN, generated]) expect(stored).not.toContain(token);
  });

  it('is returned by no response after creation (the hash is)', () => {
    expect(responses.join('\n')).toContain('$2b$09$');
    for (const token of [BOOT, USER_TOKEN, NEW_TOKEN, generated]) {
      for (const body of responses) expect(body).not.toContain(token);
    }
  });

  it('is logged nowhere, not even when a request fails on an infrastructure fault', async () => {
    await h.database.close();
    const res = await h.http().get('/rbac/users').set('Kong-Admin-Token', BOOT);
    expect(res.status).toBe(500);
    const failing = await h.http().get('/services').set('Kong-Admin-Token', USER_TOKEN);
    expect(failing.status).toBe(500);
    expect(h.logged.length).toBeGreaterThan(0);
    const logs = [...h.logged, ...consoleLines].join('\n');
    for (const token of [BOOT, USER_TOKEN, NEW_TOKEN, generated]) expect(logs).not.toContain(token);
    // close() must not close the database twice
    h.database.close = async () => {};
    await h.close();
  });
});
