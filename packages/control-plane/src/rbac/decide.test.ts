import { describe, expect, it } from '@jest/globals';
import { HttpError } from '@gatehouse/core';
import {
  ACTION_BITS,
  ALL_ACTIONS,
  BUILTIN_ROLES,
  actionFromMethod,
  actionNames,
  buildPermissionMap,
  decideEndpoint,
  decideEntity,
  decisionPath,
  matchingEndpoints,
  normalizeEndpoint,
  parseActions,
  pathSegments,
  type EndpointPermission,
  type EntityPermission,
  type RbacAction,
} from './decide';

const R = ACTION_BITS.read;
const C = ACTION_BITS.create;
const U = ACTION_BITS.update;
const D = ACTION_BITS.delete;

const allow = (endpoint: string, actions = ALL_ACTIONS, workspace = 'default'): EndpointPermission => ({
  workspace,
  endpoint,
  actions,
  negative: false,
});
const deny = (endpoint: string, actions = ALL_ACTIONS, workspace = 'default'): EndpointPermission => ({
  workspace,
  endpoint,
  actions,
  negative: true,
});

type Row = [name: string, perms: EndpointPermission[], ws: string, path: string, action: RbacAction, expected: boolean];

function runTable(rows: Row[]) {
  it.each(rows)('%s', (_name, perms, workspace, path, action, expected) => {
    expect(decideEndpoint(perms, { workspace, path, action }).allowed).toBe(expected);
  });
}

describe('actionFromMethod', () => {
  it.each([
    ['GET', 'read'],
    ['HEAD', 'read'],
    ['OPTIONS', 'read'],
    ['POST', 'create'],
    ['PUT', 'update'],
    ['PATCH', 'update'],
    ['DELETE', 'delete'],
    ['get', 'read'],
    ['TRACE', null],
  ])('%s → %s', (method, action) => {
    expect(actionFromMethod(method)).toBe(action);
  });
});

describe('parseActions / actionNames', () => {
  it.each<[unknown, number]>([
    ['read', R],
    ['read,create', R | C],
    [' read , delete ', R | D],
    ['read,update,create,delete', ALL_ACTIONS],
    ['*', ALL_ACTIONS],
    [['read', 'update'], R | U],
    [['*'], ALL_ACTIONS],
    ['', 0],
    [undefined, 0],
    [null, 0],
  ])('%j → %i', (input, bits) => {
    expect(parseActions(input)).toBe(bits);
  });

  it.each([['read,fly', 'fly'], [['write'], 'write'], ['READ', 'READ']])('%j is refused with 400 naming %s', (input, bad) => {
    let caught: unknown;
    try {
      parseActions(input);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HttpError);
    expect((caught as HttpError).status).toBe(400);
    expect((caught as HttpError).message).toBe(`Undefined RBAC action ${bad}`);
  });

  it('names bits in read, create, update, delete order', () => {
    expect(actionNames(ALL_ACTIONS)).toEqual(['read', 'create', 'update', 'delete']);
    expect(actionNames(D | R)).toEqual(['read', 'delete']);
    expect(actionNames(0)).toEqual([]);
  });
});

describe('normalizeEndpoint', () => {
  it.each([
    ['/services', '/services'],
    ['services', '/services'],
    ['services/', '/services'],
    ['  /services/  ', '/services'],
    ['/services//', '/services'],
    ['*', '*'],
    [' * ', '*'],
    ['/', '/'],
    ['/services/*', '/services/*'],
    ['rbac/*/*', '/rbac/*/*'],
  ])('%j → %j', (input, out) => {
    expect(normalizeEndpoint(input)).toBe(out);
  });
});

describe('pathSegments', () => {
  it('drops empty segments and decodes each one', () => {
    expect(pathSegments('/consumers/%62ob/')).toEqual(['consumers', 'bob']);
    expect(pathSegments('//services//x')).toEqual(['services', 'x']);
    expect(pathSegments('/a%2Fb/c')).toEqual(['a/b', 'c']);
    expect(pathSegments('/services?size=1')).toEqual(['services']);
    expect(pathSegments('/bad%zz')).toEqual(['bad%zz']);
  });
});

describe('matchingEndpoints orders by specificity', () => {
  it('exact first, then wildcards from the right, then the lone star', () => {
    const eps = ['*', '/*/*/*', '/a/*/*', '/a/b/*', '/a/b/c', '/a/*/c', '/x/b/c', '/a/b'];
    expect(matchingEndpoints(eps, '/a/b/c')).toEqual(['/a/b/c', '/a/b/*', '/a/*/c', '/a/*/*', '/*/*/*', '*']);
  });
});

describe('decideEndpoint: `*` replaces exactly one segment', () => {
  runTable([
    ['lone * matches the root', [allow('*', R)], 'default', '/', 'read', true],
    ['lone * matches a deep path', [allow('*', R)], 'default', '/a/b/c/d/e/f', 'read', true],
    ['/* matches one segment', [allow('/*', R)], 'default', '/services', 'read', true],
    ['/* does not match two segments', [allow('/*', R)], 'default', '/services/x', 'read', false],
    ['/* does not match the root', [allow('/*', R)], 'default', '/', 'read', false],
    ['/services/* matches /services/x', [allow('/services/*', R)], 'default', '/services/x', 'read', true],
    ['/services/* does not match /services', [allow('/services/*', R)], 'default', '/services', 'read', false],
    ['/services/* does not match /services/x/routes', [allow('/services/*', R)], 'default', '/services/x/routes', 'read', false],
    ['/services/*/* matches depth 3', [allow('/services/*/*', R)], 'default', '/services/x/routes', 'read', true],
    ['/services/*/plugins matches a middle star', [allow('/services/*/plugins', R)], 'default', '/services/x/plugins', 'read', true],
    ['/services/*/plugins refuses another tail', [allow('/services/*/plugins', R)], 'default', '/services/x/routes', 'read', false],
    ['/*/*/*/* matches depth 4', [allow('/*/*/*/*', R)], 'default', '/consumers/c/key-auth/k', 'read', true],
    ['/*/*/*/* refuses depth 3', [allow('/*/*/*/*', R)], 'default', '/consumers/c/key-auth', 'read', false],
    ['/*/*/*/*/* matches depth 5', [allow('/*/*/*/*/*', R)], 'default', '/a/b/c/d/e', 'read', true],
    ['a trailing slash in the request is ignored', [allow('/services', R)], 'default', '/services/', 'read', true],
    ['a percent-encoded segment is matched decoded', [allow('/consumers/bob', R)], 'default', '/consumers/%62ob', 'read', true],
    ['the star is not a prefix glob', [allow('/serv*', R)], 'default', '/services', 'read', false],
    ['exact rule is exact', [allow('/services', R)], 'default', '/routes', 'read', false],
    ['nothing matching = deny', [], 'default', '/services', 'read', false],
  ]);
});

describe('decideEndpoint: the interface document example /rbac/*, /rbac/*/*, /rbac/*/*/*', () => {
  const covering = [allow('/rbac/*'), allow('/rbac/*/*'), allow('/rbac/*/*/*')];
  runTable([
    ['covers /rbac/users', covering, 'default', '/rbac/users', 'create', true],
    ['covers /rbac/users/bob', covering, 'default', '/rbac/users/bob', 'update', true],
    ['covers /rbac/users/bob/roles', covering, 'default', '/rbac/users/bob/roles', 'delete', true],
    ['covers /rbac/roles/r/permissions', covering, 'default', '/rbac/roles/r/permissions', 'read', true],
    ['does not cover /rbac itself', covering, 'default', '/rbac', 'read', false],
    ['does not cover a sibling tree', covering, 'default', '/services/x', 'read', false],
    ['/rbac/* alone does not cover /rbac/users/bob', [allow('/rbac/*')], 'default', '/rbac/users/bob', 'read', false],
    ['/rbac/*/* alone does not cover /rbac/users', [allow('/rbac/*/*')], 'default', '/rbac/users', 'read', false],
  ]);
});

describe('decideEndpoint: actions', () => {
  runTable([
    ['granted action allowed', [allow('/services', R | C)], 'default', '/services', 'create', true],
    ['other action refused', [allow('/services', R | C)], 'default', '/services', 'delete', false],
    ['each action has its own bit: update', [allow('/services', U)], 'default', '/services', 'update', true],
    ['each action has its own bit: read not in update', [allow('/services', U)], 'default', '/services', 'read', false],
    ['a rule without the action does not stop the search', [allow('/services', R), allow('*', D)], 'default', '/services', 'delete', true],
    ['a rule without the action falls to nothing = deny', [allow('/services', R)], 'default', '/services', 'delete', false],
  ]);
});

describe('decideEndpoint: negative permissions and precedence', () => {
  runTable([
    ['negative exact denies', [deny('/services', R)], 'default', '/services', 'read', false],
    ['negative wins at the same key over a positive from another role', [allow('/services', R), deny('/services', R)], 'default', '/services', 'read', false],
    ['negative at the same key only for the actions it names', [allow('/services', R | C), deny('/services', C)], 'default', '/services', 'read', true],
    ['exact positive beats a negative wildcard', [allow('/services/svc1', R), deny('/services/*', R)], 'default', '/services/svc1', 'read', true],
    ['the negative wildcard still denies the others', [allow('/services/svc1', R), deny('/services/*', R)], 'default', '/services/svc2', 'read', false],
    ['exact negative beats a positive wildcard', [deny('/services/svc1', R), allow('/services/*', R)], 'default', '/services/svc1', 'read', false],
    ['more literals beat fewer: /a/b/* over /a/*/*', [allow('/a/*/*', R), deny('/a/b/*', R)], 'default', '/a/b/c', 'read', false],
    ['more literals beat fewer: positive /a/b/* over negative /*/*/*', [deny('/*/*/*', R), allow('/a/b/*', R)], 'default', '/a/b/c', 'read', true],
    ['same literal count: the left literal wins (/a/b/* over /a/*/c)', [deny('/a/*/c', R), allow('/a/b/*', R)], 'default', '/a/b/c', 'read', true],
    ['a specific wildcard beats the lone star', [allow('*', R), deny('/services/*', R)], 'default', '/services/x', 'read', false],
    ['the lone star decides when nothing else matches', [allow('*', R), deny('/services/*', R)], 'default', '/routes/x', 'read', true],
    ['negative lone star denies everything unmatched', [deny('*', R), allow('/services', R)], 'default', '/routes', 'read', false],
    ['negative lone star does not override an exact grant', [deny('*', R), allow('/services', R)], 'default', '/services', 'read', true],
  ]);
});

describe('decideEndpoint: workspaces', () => {
  runTable([
    ['a rule in the request workspace applies', [allow('/services', R, 'ws1')], 'ws1', '/services', 'read', true],
    ['a rule in another workspace does not', [allow('/services', R, 'ws1')], 'ws2', '/services', 'read', false],
    ['a rule in default does not apply to ws1', [allow('/services', R, 'default')], 'ws1', '/services', 'read', false],
    ['workspace * applies everywhere', [allow('/services', R, '*')], 'ws9', '/services', 'read', true],
    [
      'the request workspace is searched before * (negative in W beats positive in *)',
      [deny('/services', R, 'ws1'), allow('/services', R, '*')],
      'ws1',
      '/services',
      'read',
      false,
    ],
    [
      'the request workspace is searched before * (positive in W beats negative in *)',
      [allow('/services', R, 'ws1'), deny('/services', R, '*')],
      'ws1',
      '/services',
      'read',
      true,
    ],
    [
      "W's lone star comes before a specific endpoint in * (workspace first)",
      [allow('*', R, 'ws1'), deny('/services', R, '*')],
      'ws1',
      '/services',
      'read',
      true,
    ],
    [
      'workspace * is consulted when W has no rule for the action',
      [allow('/services', C, 'ws1'), allow('/services', R, '*')],
      'ws1',
      '/services',
      'read',
      true,
    ],
    ['a * rule does not leak the name of another workspace', [deny('*', R, 'ws1'), allow('*', R, '*')], 'ws2', '/services', 'read', true],
  ]);

  it('reports the rule that decided', () => {
    const d = decideEndpoint([allow('/services/*', R, 'ws1'), deny('*', R, '*')], { workspace: 'ws1', path: '/services/a', action: 'read' });
    expect(d).toEqual({ allowed: true, matched: { workspace: 'ws1', endpoint: '/services/*', negative: false } });
    const n = decideEndpoint([deny('*', R, '*')], { workspace: 'ws1', path: '/x', action: 'read' });
    expect(n).toEqual({ allowed: false, matched: { workspace: '*', endpoint: '*', negative: true } });
    expect(decideEndpoint([], { workspace: 'ws1', path: '/x', action: 'read' })).toEqual({ allowed: false });
  });
});

describe('decisionPath folds the endpoint of a role-endpoint permission into one segment', () => {
  it.each([
    ['/rbac/roles/r/endpoints/default/services', '/rbac/roles/r/endpoints/default/services'],
    ['/rbac/roles/r/endpoints/default/*', '/rbac/roles/r/endpoints/default/*'],
    ['/rbac/roles/r/endpoints/default/services/*', '/rbac/roles/r/endpoints/default/services%2F*'],
    ['/rbac/roles/r/endpoints/default/a/b/c/d', '/rbac/roles/r/endpoints/default/a%2Fb%2Fc%2Fd'],
    ['/rbac/roles/r/endpoints', '/rbac/roles/r/endpoints'],
    ['/services/a/b/c/d/e/f', '/services/a/b/c/d/e/f'],
  ])('%s → %s', (input, out) => {
    expect(decisionPath(input)).toBe(out);
  });
});

const builtin = (name: string) => BUILTIN_ROLES.find((r) => r.name === name)!;

describe('built-in roles', () => {
  const paths = [
    '/',
    '/services',
    '/services/s1',
    '/services/s1/routes',
    '/consumers/c/key-auth/k',
    '/workspaces',
    '/key-sets/ks',
  ];
  const rbacPaths = [
    '/rbac',
    '/rbac/users',
    '/rbac/users/bob',
    '/rbac/users/bob/roles',
    '/rbac/users/bob/permissions',
    '/rbac/roles/r/endpoints',
    '/rbac/roles/r/entities/e',
    '/rbac/roles/r/endpoints/permissions',
    '/rbac/roles/r/endpoints/default/services',
    '/rbac/roles/r/endpoints/ws1/services/*/plugins/*',
    '/admins',
    '/admins/a',
    '/admins/a/roles',
  ];
  const actions: RbacAction[] = ['read', 'create', 'update', 'delete'];
  const cases = (ps: string[]) => ps.flatMap((p) => actions.flatMap((a) => ['default', 'ws1'].map((ws) => [p, a, ws] as const)));
  const decide = (role: string, path: string, action: RbacAction, workspace: string) =>
    decideEndpoint(builtin(role).endpoints, { workspace, path: decisionPath(path), action }).allowed;

  it.each(cases(paths))('super-admin: %s %s in %s → allowed', (p, a, ws) => expect(decide('super-admin', p, a, ws)).toBe(true));
  it.each(cases(rbacPaths))('super-admin: RBAC %s %s in %s → allowed', (p, a, ws) => expect(decide('super-admin', p, a, ws)).toBe(true));
  it.each(cases(paths))('admin: %s %s in %s → allowed', (p, a, ws) => expect(decide('admin', p, a, ws)).toBe(true));
  it.each(cases(rbacPaths))('admin: RBAC %s %s in %s → denied', (p, a, ws) => expect(decide('admin', p, a, ws)).toBe(false));
  it.each(cases([...paths, ...rbacPaths]))('read-only: %s %s in %s', (p, a, ws) => expect(decide('read-only', p, a, ws)).toBe(a === 'read'));

  it('entity rules: super-admin and admin everything, read-only reads', () => {
    const req = (action: RbacAction) => ({ entityId: 'e1', workspaceId: 'w1', action });
    for (const a of actions) {
      expect(decideEntity(builtin('super-admin').entities, req(a))).toBe(true);
      expect(decideEntity(builtin('admin').entities, req(a))).toBe(true);
      expect(decideEntity(builtin('read-only').entities, req(a))).toBe(a === 'read');
    }
  });

  it('the listing holds exactly admin, read-only and super-admin', () => {
    expect(BUILTIN_ROLES.map((r) => r.name).sort()).toEqual(['admin', 'read-only', 'super-admin']);
  });
});

describe('decideEntity', () => {
  const ent = (entity_id: string, actions: number, negative = false): EntityPermission => ({ entity_id, actions, negative });
  type ERow = [string, EntityPermission[], { entityId: string; workspaceId?: string }, RbacAction, boolean];
  it.each<ERow>([
    ['no rule = deny', [], { entityId: 'e1', workspaceId: 'w1' }, 'read', false],
    ['entity rule grants', [ent('e1', R)], { entityId: 'e1', workspaceId: 'w1' }, 'read', true],
    ['entity rule for another action', [ent('e1', R)], { entityId: 'e1', workspaceId: 'w1' }, 'delete', false],
    ['rule on another entity does not grant', [ent('e2', R)], { entityId: 'e1', workspaceId: 'w1' }, 'read', false],
    ['workspace id covers its entities', [ent('w1', R)], { entityId: 'e1', workspaceId: 'w1' }, 'read', true],
    ['workspace id covers future entities', [ent('w1', R)], { entityId: 'brand-new', workspaceId: 'w1' }, 'read', true],
    ['workspace id does not cover another workspace', [ent('w1', R)], { entityId: 'e1', workspaceId: 'w2' }, 'read', false],
    ['* covers everything', [ent('*', ALL_ACTIONS)], { entityId: 'e1', workspaceId: 'w1' }, 'update', true],
    ['* covers entities outside workspaces', [ent('*', R)], { entityId: 'e1' }, 'read', true],
    ['both set: both must allow (both do)', [ent('e1', R), ent('w1', R)], { entityId: 'e1', workspaceId: 'w1' }, 'read', true],
    ['both set: a negative workspace denies', [ent('e1', R), ent('w1', R, true)], { entityId: 'e1', workspaceId: 'w1' }, 'read', false],
    ['both set: a negative entity denies', [ent('e1', R, true), ent('w1', R)], { entityId: 'e1', workspaceId: 'w1' }, 'read', false],
    ['only entity set decides over *', [ent('e1', R, true), ent('*', R)], { entityId: 'e1', workspaceId: 'w1' }, 'read', false],
    ['entity grant beats a negative *', [ent('e1', R), ent('*', R, true)], { entityId: 'e1', workspaceId: 'w1' }, 'read', true],
    ['negative * denies the rest', [ent('e1', R), ent('*', R, true)], { entityId: 'e2', workspaceId: 'w1' }, 'read', false],
    ['negative wins at the same key', [ent('e1', R), ent('e1', R, true)], { entityId: 'e1', workspaceId: 'w1' }, 'read', false],
    ['the workspace entity itself, by its own id', [ent('w1', U)], { entityId: 'w1', workspaceId: 'w1' }, 'update', true],
  ])('%s', (_n, perms, req, action, expected) => {
    expect(decideEntity(perms, { ...req, action })).toBe(expected);
  });
});

describe('buildPermissionMap', () => {
  it('keys endpoints by "/" + workspace + endpoint, or * for the lone star', () => {
    const map = buildPermissionMap(
      [allow('/services/*', R | C), allow('*', R, '*'), deny('/rbac/*', ALL_ACTIONS, '*'), allow('/', R)],
      [{ entity_id: '*', entity_type: 'wildcard', actions: ALL_ACTIONS, negative: false }],
    );
    expect(map).toEqual({
      endpoints: {
        default: { '/default/services/*': { actions: ['read', 'create'], negative: false }, '/default': { actions: ['read'], negative: false } },
        '*': {
          '*': { actions: ['read'], negative: false },
          '/*/rbac/*': { actions: ['read', 'create', 'update', 'delete'], negative: true },
        },
      },
      entities: { '*': { actions: ['read', 'create', 'update', 'delete'], negative: false } },
    });
  });

  it('merges roles at one key: every action named, negative when any is denied', () => {
    const map = buildPermissionMap([allow('/services', R), deny('/services', D)], []);
    expect(map.endpoints.default!['/default/services']).toEqual({ actions: ['read', 'delete'], negative: true });
  });

  it('is empty without permissions', () => {
    expect(buildPermissionMap([], [])).toEqual({ endpoints: {}, entities: {} });
  });
});
