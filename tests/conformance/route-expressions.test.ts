import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startAdmin, type AdminHarness } from './support/admin-harness';

jest.setTimeout(60_000);

/**
 * Decision 35: `router_flavor = expressions` (GATEHOUSE_ROUTER_FLAVOR). Routes carry `expression` and `priority`,
 * validated as Kong 3.9 does (kong/db/schema/entities/routes.lua `validate_route`, the atc-router crate's parser and
 * semantic checks), with Kong's messages; under the default flavor both fields are unknown.
 */
const LEAD = 'Router Expression failed validation: ';

describe('route expressions under router_flavor = traditional_compatible', () => {
  let admin: AdminHarness;
  beforeAll(async () => {
    admin = await startAdmin('postgres');
  });
  afterAll(async () => {
    await admin?.close();
  });

  it('refuses expression and priority as unknown fields', async () => {
    const res = await admin.http().post('/routes').send({ protocols: ['http'], hosts: ['example.com'], expression: 'http.method == "GET"', priority: 100 });
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual({ expression: 'unknown field', priority: 'unknown field' });
  });
});

describe('route expressions under router_flavor = expressions', () => {
  let admin: AdminHarness;
  beforeAll(async () => {
    admin = await startAdmin('postgres', { routerFlavor: 'expressions' });
  });
  afterAll(async () => {
    await admin?.close();
  });
  const post = (body: Record<string, unknown>) => admin.http().post('/routes').send(body);
  const entityError = async (body: Record<string, unknown>) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(2);
    expect(res.body.name).toBe('schema violation');
    return res.body.fields['@entity'] as string[];
  };

  it('stores a route with an expression and a priority, and gives traditional routes expression null, priority 0', async () => {
    const res = await post({ name: 'expr', protocols: ['http'], expression: '(http.method == "GET")', priority: 100, strip_path: false });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'expr', expression: '(http.method == "GET")', priority: 100, strip_path: false, regex_priority: 0 });
    const trad = await post({ name: 'trad', paths: ['/t'], sources: [{ ip: '127.0.0.1' }] });
    expect(trad.status).toBe(201);
    expect(trad.body).toMatchObject({ expression: null, priority: 0, sources: [{ ip: '127.0.0.1' }] });
    const got = await admin.http().get('/routes/expr');
    expect(got.body).toMatchObject({ expression: '(http.method == "GET")', priority: 100 });
  });

  it('refuses an expression beside the matching fields, regex_priority beside an expression, priority beside the fields', async () => {
    const both = `${LEAD}cannot set 'expression' with 'methods', 'hosts', 'paths', 'headers', 'snis', 'sources' or 'destinations' simultaneously`;
    expect(await entityError({ protocols: ['http'], expression: 'http.method == "GET"', hosts: ['a.test'] })).toEqual([both]);
    expect(await entityError({ protocols: ['https'], expression: 'http.method == "GET"', snis: ['a.test'] })).toEqual([both]);
    expect(await entityError({ protocols: ['http'], expression: 'http.method == "GET"', regex_priority: 100 })).toEqual([
      `${LEAD}cannot set 'regex_priority' with 'expression' simultaneously`,
    ]);
    expect(await entityError({ protocols: ['http'], paths: ['/p'], priority: 100 })).toEqual([
      `${LEAD}cannot set 'priority' with 'methods', 'hosts', 'paths', 'headers', 'snis', 'sources' or 'destinations' simultaneously`,
    ]);
  });

  it('answers syntax errors with the parser’s position and expectation', async () => {
    expect(await entityError({ protocols: ['http'], priority: 100, expression: '(http.method == "GET") &&' })).toEqual([
      `${LEAD} --> 1:26\n  |\n1 | (http.method == "GET") &&\n  |                          ^---\n  |\n  = expected term`,
    ]);
    expect(await entityError({ protocols: ['http'], expression: 'http.method == "GET" && http.path ~ "/[abc/*/user$"' })).toEqual([
      expect.stringContaining(`${LEAD} --> 1:37`),
    ]);
    expect(await entityError({ protocols: ['tcp'], expression: 'net.src.ip in 1.2.3.4/16 && net.src.port == 80' })).toEqual([
      `${LEAD} --> 1:15\n  |\n1 | net.src.ip in 1.2.3.4/16 && net.src.port == 80\n  |               ^--------^\n  |\n  = host part of address was not zero`,
    ]);
  });

  it('answers unknown fields and type mismatches with the crate’s messages', async () => {
    expect(await entityError({ protocols: ['tcp'], expression: 'http.method == "GET" && net.src.ip == 1.2.3.4 && net.src.port == 80' })).toEqual([
      `${LEAD}Unknown LHS field`,
    ]);
    expect(await entityError({ protocols: ['http'], expression: 'http.host == 80' })).toEqual([`${LEAD}Type mismatch between the LHS and RHS values of predicate`]);
    expect(await entityError({ protocols: ['http'], expression: 'lower(net.src.port) == 80' })).toEqual([
      `${LEAD}lower-case transformation function only supported with String type fields`,
    ]);
    expect(await entityError({ protocols: ['http'], expression: 'http.path.segments.2_1 == "x"' })).toEqual([`${LEAD}illformed http.path.segments.* field`]);
  });

  it('accepts stream and gRPC expressions, net.port as net.dst.port, and path segments', async () => {
    for (const [protocols, expression] of [
      [['tcp'], 'net.src.ip == 1.2.3.4 && net.src.port == 80'],
      [['grpc'], 'http.method == "GET" && net.port == 8000'],
      [['grpcs'], 'http.path.segments.20_30 ~ r#"x/y"#'],
      [['https'], 'http.method == "GET" && net.src.ip in 10.0.0.0/8'],
    ] as const) {
      const res = await post({ protocols, expression, priority: 1 });
      expect([expression, res.status]).toEqual([expression, 201]);
    }
  });

  it('names expression among the fields a route must set, and bounds priority', async () => {
    expect(await entityError({ protocols: ['http'] })).toEqual(["must set one of 'methods', 'hosts', 'headers', 'paths', 'expression' when 'protocols' is 'http'"]);
    const big = await post({ protocols: ['http'], expression: 'http.path == "/"', priority: 2 ** 46 });
    expect(big.status).toBe(400);
    expect(big.body.fields).toEqual({ priority: 'value should be between 0 and 70368744177663' });
  });

  it('validates an update the same way', async () => {
    const created = await post({ name: 'to-patch', protocols: ['http'], expression: 'http.path ^= "/a"' });
    expect(created.status).toBe(201);
    const bad = await admin.http().patch('/routes/to-patch').send({ expression: 'http.path ^= ' });
    expect(bad.status).toBe(400);
    expect(bad.body.fields['@entity']).toEqual([expect.stringContaining('= expected rhs')]);
    const good = await admin.http().patch('/routes/to-patch').send({ expression: 'http.path ^= "/b"', priority: 7 });
    expect(good.status).toBe(200);
    expect(good.body).toMatchObject({ expression: 'http.path ^= "/b"', priority: 7 });
  });

  it('checks expressions in a declarative document', async () => {
    const doc = {
      _format_version: '3.0',
      services: [{ name: 'decl', url: 'http://127.0.0.1:9', routes: [{ name: 'decl-bad', expression: 'http.nope == "x"' }] }],
    };
    const res = await admin.http().post('/config').send(doc);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain(`${LEAD}Unknown LHS field`);
    const good = { ...doc, services: [{ ...doc.services[0], routes: [{ name: 'decl-good', expression: 'http.path ^= "/d"', priority: 3 }] }] };
    const applied = await admin.http().post('/config').send(good);
    expect(applied.status).toBe(201);
    const route = await admin.http().get('/routes/decl-good');
    expect(route.body).toMatchObject({ expression: 'http.path ^= "/d"', priority: 3 });
  });
});
