/**
 * Every RBAC decision of the admin API, as pure functions: no I/O, no clock, no database.
 *
 * Endpoint rules (kong-reference Part B §3.3, interface.md "Role endpoint permissions"):
 * - `*` inside an endpoint stands for exactly one path segment; a lone `*` matches every path.
 * - Rules from all of a caller's roles merge into one map keyed by workspace, then endpoint. At one key an action
 *   marked negative by any role is denied: negative wins at the same key.
 * - The request's workspace is searched first (all of its candidates, its `*` included), then workspace `*`.
 * - Inside one workspace the most specific matching endpoint that mentions the action decides: the exact path,
 *   then wildcard patterns with more literal segments, ties going to the pattern whose first literal sits further
 *   left (Kong's right-to-left generalisation `/a/b/*` → `/a/*\/*` → `/*\/*\/*`), then the lone `*`.
 *   A rule that does not mention the action does not stop the search.
 * - Nothing matching = deny.
 *
 * Entity rules (§3.4): a workspace id covers every entity in it; `*` covers all entities; see decideEntity.
 */
import { Errors } from '@gatehouse/core';

export type RbacAction = 'read' | 'create' | 'update' | 'delete';

/** Kong's action bits. A negative permission keeps its bits shifted left by NEGATIVE_SHIFT in the merged map. */
export const ACTION_BITS: Readonly<Record<RbacAction, number>> = { read: 1, create: 2, update: 4, delete: 8 };
export const ALL_ACTIONS = 15;
export const RBAC_ACTIONS: readonly RbacAction[] = ['read', 'create', 'update', 'delete'];
const NEGATIVE_SHIFT = 4;

/** The lone-star endpoint and the all-workspaces workspace. */
export const WILDCARD = '*';
export const DEFAULT_WORKSPACE = 'default';

/** GET/HEAD/OPTIONS = read, POST = create, PUT/PATCH = update, DELETE = delete; anything else: null. */
export function actionFromMethod(method: string): RbacAction | null {
  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
      return 'read';
    case 'POST':
      return 'create';
    case 'PUT':
    case 'PATCH':
      return 'update';
    case 'DELETE':
      return 'delete';
    default:
      return null;
  }
}

/**
 * Parses `actions` as the admin API accepts it: a comma-separated string (`"read,create"`), `"*"` (all four),
 * or an array of names. Returns the bitmask; an empty input gives 0 (the caller decides whether that is allowed).
 * An unknown name is Kong's 400 `Undefined RBAC action <name>`.
 */
export function parseActions(input: unknown): number {
  let names: unknown[];
  if (Array.isArray(input)) names = input;
  else if (typeof input === 'string') names = input.split(',');
  else if (input === null || input === undefined) return 0;
  else throw Errors.badRequest(`Undefined RBAC action ${String(input)}`);
  let bits = 0;
  for (const raw of names) {
    const name = typeof raw === 'string' ? raw.trim() : String(raw);
    if (name === '') continue;
    if (name === WILDCARD) {
      bits |= ALL_ACTIONS;
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(ACTION_BITS, name)) throw Errors.badRequest(`Undefined RBAC action ${name}`);
    bits |= ACTION_BITS[name as RbacAction];
  }
  return bits;
}

/** The names set in a 4-bit action mask, in Kong's order read, create, update, delete. */
export function actionNames(bits: number): RbacAction[] {
  return RBAC_ACTIONS.filter((a) => (bits & ACTION_BITS[a]) !== 0);
}

/**
 * Normalises an endpoint on write, as Kong does: trim, drop a trailing `/`, add a leading `/`; `*` is left alone.
 * `/` stays `/`.
 */
export function normalizeEndpoint(endpoint: string): string {
  const trimmed = endpoint.trim();
  if (trimmed === WILDCARD) return WILDCARD;
  let out = trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
  while (out.length > 1 && out.endsWith('/')) out = out.slice(0, -1);
  return out;
}

/**
 * Splits a request path (already without its workspace prefix) into decoded segments. Empty segments (`//`, a
 * trailing `/`) are dropped so `/services/` and `/services` decide alike; each segment is percent-decoded on its
 * own, as the router decodes path parameters, so `/consumers/%62ob` is judged as `/consumers/bob`.
 */
export function pathSegments(path: string): string[] {
  const out: string[] = [];
  for (const raw of path.split('?')[0]!.split('/')) {
    if (raw === '') continue;
    let seg = raw;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      // a malformed escape is judged as written; the router will refuse it anyway
    }
    out.push(seg);
  }
  return out;
}

/** A permission of one role on one endpoint (a row of rbac_role_endpoints). */
export interface EndpointPermission {
  workspace: string;
  endpoint: string;
  /** 4-bit action mask */
  actions: number;
  negative: boolean;
}

/** A permission of one role on one entity (a row of rbac_role_entities). */
export interface EntityPermission {
  entity_id: string;
  entity_type?: string;
  actions: number;
  negative: boolean;
}

/** Merged endpoint rules: workspace → endpoint → 8-bit mask (low nibble allowed, high nibble denied). */
export type EndpointRuleMap = Map<string, Map<string, number>>;
/** Merged entity rules: entity id (or a workspace id, or `*`) → 8-bit mask. */
export type EntityRuleMap = Map<string, number>;

function maskOf(p: { actions: number; negative: boolean }): number {
  const bits = p.actions & ALL_ACTIONS;
  return p.negative ? bits << NEGATIVE_SHIFT : bits;
}

export function mergeEndpointPermissions(perms: Iterable<EndpointPermission>): EndpointRuleMap {
  const map: EndpointRuleMap = new Map();
  for (const p of perms) {
    let byEndpoint = map.get(p.workspace);
    if (!byEndpoint) map.set(p.workspace, (byEndpoint = new Map()));
    const key = normalizeEndpoint(p.endpoint);
    byEndpoint.set(key, (byEndpoint.get(key) ?? 0) | maskOf(p));
  }
  return map;
}

export function mergeEntityPermissions(perms: Iterable<EntityPermission>): EntityRuleMap {
  const map: EntityRuleMap = new Map();
  for (const p of perms) map.set(p.entity_id, (map.get(p.entity_id) ?? 0) | maskOf(p));
  return map;
}

/** 'deny' if the action is denied at this key, 'allow' if granted, null if the key does not mention it. */
export function verdictAt(mask: number | undefined, action: RbacAction): 'allow' | 'deny' | null {
  if (mask === undefined) return null;
  const bit = ACTION_BITS[action];
  if (mask & (bit << NEGATIVE_SHIFT)) return 'deny';
  if (mask & bit) return 'allow';
  return null;
}

/**
 * Sort key of an endpoint pattern: more literal segments first, then the literal furthest left. Lower sorts first.
 * The exact path has no `*` and so always comes first among patterns of its length.
 */
function specificity(segments: string[]): [number, string] {
  const literals = segments.filter((s) => s !== WILDCARD).length;
  // '0' for a literal, '1' for a star: comparing these strings puts left-most literals first
  return [-literals, segments.map((s) => (s === WILDCARD ? '1' : '0')).join('')];
}

function patternMatches(pattern: string[], path: string[]): boolean {
  if (pattern.length !== path.length) return false;
  for (let i = 0; i < pattern.length; i++) if (pattern[i] !== WILDCARD && pattern[i] !== path[i]) return false;
  return true;
}

/** The endpoints of one workspace that match the path, most specific first, the lone `*` last. */
export function matchingEndpoints(endpoints: Iterable<string>, path: string): string[] {
  const segs = pathSegments(path);
  const hits: { endpoint: string; key: [number, string] }[] = [];
  let lone = false;
  for (const endpoint of endpoints) {
    if (endpoint === WILDCARD) {
      lone = true;
      continue;
    }
    const pattern = endpoint.split('/').filter((s) => s !== '');
    if (patternMatches(pattern, segs)) hits.push({ endpoint, key: specificity(pattern) });
  }
  hits.sort((a, b) => a.key[0] - b.key[0] || (a.key[1] < b.key[1] ? -1 : a.key[1] > b.key[1] ? 1 : 0));
  const out = hits.map((h) => h.endpoint);
  if (lone) out.push(WILDCARD);
  return out;
}

export interface EndpointRequest {
  /** the request's workspace name (`default` when the path had no prefix) */
  workspace: string;
  /** the admin path without the workspace prefix, e.g. `/services/foo` */
  path: string;
  action: RbacAction;
}

export interface EndpointDecision {
  allowed: boolean;
  /** the rule that decided, if any */
  matched?: { workspace: string; endpoint: string; negative: boolean };
}

/** Decides the endpoint check for one request. */
export function decideEndpoint(
  rules: EndpointRuleMap | Iterable<EndpointPermission>,
  req: EndpointRequest,
): EndpointDecision {
  const map = rules instanceof Map ? rules : mergeEndpointPermissions(rules);
  const workspaces = req.workspace === WILDCARD ? [WILDCARD] : [req.workspace, WILDCARD];
  for (const ws of workspaces) {
    const byEndpoint = map.get(ws);
    if (!byEndpoint) continue;
    for (const endpoint of matchingEndpoints(byEndpoint.keys(), req.path)) {
      const verdict = verdictAt(byEndpoint.get(endpoint), req.action);
      if (verdict) return { allowed: verdict === 'allow', matched: { workspace: ws, endpoint, negative: verdict === 'deny' } };
    }
  }
  return { allowed: false };
}

export interface EntityRequest {
  /** the entity's id */
  entityId: string;
  /** the id of the workspace the entity lives in (absent for entities outside workspaces) */
  workspaceId?: string | null;
  action: RbacAction;
}

/**
 * Decides the entity check (Kong §3.4). The rule on the entity id (e) and the rule on its workspace id (w) are
 * looked up exactly: both set → both must allow; one set → it decides; neither → the `*` rule decides; no rule at
 * all → deny. A negative rule at a key always denies the action there.
 */
export function decideEntity(rules: EntityRuleMap | Iterable<EntityPermission>, req: EntityRequest): boolean {
  const map = rules instanceof Map ? rules : mergeEntityPermissions(rules);
  const e = verdictAt(map.get(req.entityId), req.action);
  const w = req.workspaceId && req.workspaceId !== req.entityId ? verdictAt(map.get(req.workspaceId), req.action) : null;
  if (e && w) return e === 'allow' && w === 'allow';
  if (e) return e === 'allow';
  if (w) return w === 'allow';
  return verdictAt(map.get(WILDCARD), req.action) === 'allow';
}

/** One value of a `/permissions` map: the interface document's `{actions:[...], negative}` shape. */
export interface PermissionValue {
  actions: RbacAction[];
  negative: boolean;
}

export interface PermissionMap {
  endpoints: Record<string, Record<string, PermissionValue>>;
  entities: Record<string, PermissionValue>;
}

/**
 * The `/permissions` body. Endpoint keys are `"/" + workspace + endpoint`, or `*` for the lone-star endpoint
 * (Kong §1.4). When roles merged at one key both grant and deny, the value lists every action mentioned and
 * says negative: true, because a negative mark at a key wins for the actions it names.
 */
export function buildPermissionMap(
  endpointPerms: Iterable<EndpointPermission>,
  entityPerms: Iterable<EntityPermission>,
): PermissionMap {
  const endpoints: PermissionMap['endpoints'] = {};
  for (const [ws, byEndpoint] of mergeEndpointPermissions(endpointPerms)) {
    const out: Record<string, PermissionValue> = {};
    for (const [endpoint, mask] of byEndpoint) out[permissionKey(ws, endpoint)] = valueOf(mask);
    endpoints[ws] = out;
  }
  const entities: PermissionMap['entities'] = {};
  for (const [id, mask] of mergeEntityPermissions(entityPerms)) entities[id] = valueOf(mask);
  return { endpoints, entities };
}

export function permissionKey(workspace: string, endpoint: string): string {
  if (endpoint === WILDCARD) return WILDCARD;
  return `/${workspace}${endpoint === '/' ? '' : endpoint}`;
}

function valueOf(mask: number): PermissionValue {
  const positive = mask & ALL_ACTIONS;
  const negative = (mask >> NEGATIVE_SHIFT) & ALL_ACTIONS;
  return { actions: actionNames(positive | negative), negative: negative !== 0 };
}

/**
 * The admin path as the RBAC check sees it. The path of one role-endpoint permission,
 * `/rbac/roles/{r}/endpoints/{ws}/{endpoint…}`, carries the governed endpoint with its own slashes; for the
 * decision that tail counts as ONE segment (its inner `/` escaped), so the path has a fixed depth and the rules
 * that cover the RBAC interface (`/rbac/*` … `/rbac/*\/*\/*\/*\/*`) cover every such path however deep the
 * endpoint is. Every other path is returned unchanged.
 */
export function decisionPath(path: string): string {
  const segs = path.split('?')[0]!.split('/').filter((s) => s !== '');
  if (segs.length > 6 && segs[0] === 'rbac' && segs[1] === 'roles' && segs[3] === 'endpoints') {
    const tail = segs.slice(5).join('/');
    return `/${segs.slice(0, 5).join('/')}/${encodeURIComponent(tail)}`;
  }
  return path;
}

/** Endpoint rules of a built-in role. */
export interface BuiltinRole {
  name: 'admin' | 'read-only' | 'super-admin';
  comment: string;
  endpoints: EndpointPermission[];
  entities: EntityPermission[];
}

/**
 * The RBAC interface for the admin role's denials: `/rbac` and `/rbac/*` down to five stars (the deepest RBAC
 * path is `/rbac/roles/{r}/endpoints/{ws}/{endpoint}` once decisionPath has folded the endpoint), plus the
 * admins listing (`/admins`, `/admins/*`, `/admins/*\/*`) through which RBAC users are managed too.
 */
export const RBAC_INTERFACE_ENDPOINTS: readonly string[] = [
  '/rbac',
  '/rbac/*',
  '/rbac/*/*',
  '/rbac/*/*/*',
  '/rbac/*/*/*/*',
  '/rbac/*/*/*/*/*',
  '/admins',
  '/admins/*',
  '/admins/*/*',
];

/**
 * The three built-in roles (Kong §3.5). All endpoint rules use workspace `*`.
 * - read-only: read on every endpoint (the RBAC interface included), nothing else.
 * - admin: every action on every endpoint, with negative rules for all actions on the RBAC interface.
 * - super-admin: every action on every endpoint and every entity.
 * Kong seeds an entity rule (`*`, all actions) for super-admin only; read-only (`*`, read) and admin (`*`, all) get
 * one here too, so that their documented meaning holds under `GATEHOUSE_ENFORCE_RBAC=entity|both` as well.
 */
export const BUILTIN_ROLES: readonly BuiltinRole[] = [
  {
    name: 'read-only',
    comment: 'Read access to all endpoints, across all workspaces',
    endpoints: [{ workspace: WILDCARD, endpoint: WILDCARD, actions: ACTION_BITS.read, negative: false }],
    entities: [{ entity_id: WILDCARD, entity_type: 'wildcard', actions: ACTION_BITS.read, negative: false }],
  },
  {
    name: 'admin',
    comment: 'Full access to all endpoints, across all workspaces, except the RBAC Admin API',
    endpoints: [
      { workspace: WILDCARD, endpoint: WILDCARD, actions: ALL_ACTIONS, negative: false },
      ...RBAC_INTERFACE_ENDPOINTS.map((endpoint) => ({ workspace: WILDCARD, endpoint, actions: ALL_ACTIONS, negative: true })),
    ],
    entities: [{ entity_id: WILDCARD, entity_type: 'wildcard', actions: ALL_ACTIONS, negative: false }],
  },
  {
    name: 'super-admin',
    comment: 'Full access to all endpoints, across all workspaces',
    endpoints: [{ workspace: WILDCARD, endpoint: WILDCARD, actions: ALL_ACTIONS, negative: false }],
    entities: [{ entity_id: WILDCARD, entity_type: 'wildcard', actions: ALL_ACTIONS, negative: false }],
  },
];
