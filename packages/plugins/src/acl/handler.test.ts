import { beforeAll, describe, expect, it } from '@jest/globals';
import { emptyConfig, type Consumer, type SnapshotConfig } from '@gatehouse/core';
import type { CredentialRef, PluginContext, PluginResponse } from '../contract';
import { aclSchema } from './entities';
import type { AclIndex } from './group-index';
import { aclAccess } from './handler';
import { acl } from './index';
import { aclConfigSchema, checkAclConfig } from './schema';

const now = Math.floor(Date.now() / 1000);
const consumer = (n: number, username: string): Consumer => ({
  id: `${String(n).repeat(8)}-${String(n).repeat(4)}-4${String(n).repeat(3)}-8${String(n).repeat(3)}-${String(n).repeat(12)}`,
  username,
  custom_id: null,
  tags: null,
  created_at: now,
  updated_at: now,
});
const alice = consumer(1, 'alice');
const bob = consumer(2, 'bob');
const nobody = consumer(3, 'nobody');
const anonymous = consumer(4, 'anonymous');
const credentialOf = (c: Consumer): CredentialRef => ({ id: 'cred', identifier: 'cred', consumerId: c.id });

let index: AclIndex;

beforeAll(() => {
  const snapshot: SnapshotConfig = {
    ...emptyConfig(),
    consumers: [alice, bob, nobody, anonymous],
    credentials: {
      acls: [
        { id: 'a-1', consumer: { id: alice.id }, group: 'admin' },
        { id: 'a-2', consumer: { id: alice.id }, group: 'staff' },
        { id: 'a-3', consumer: { id: alice.id }, group: 'staff' },
        { id: 'a-4', consumer: { id: bob.id }, group: 'partners' },
        { id: 'a-5', consumer: { id: anonymous.id }, group: 'public' },
      ],
    },
  };
  index = acl.compile!(snapshot);
});

interface Seen {
  set: Record<string, string>;
  removed: string[];
}

function check(config: Record<string, unknown>, who: { consumer: Consumer | null; credential?: CredentialRef | null; anonymous?: boolean }) {
  const seen: Seen = { set: {}, removed: [] };
  const ctx: PluginContext<AclIndex> = {
    req: { method: 'GET', path: '/', headers: {}, query: new URLSearchParams(), clientIp: '127.0.0.1', scheme: 'http', readBody: async () => Buffer.alloc(0) },
    upstream: {
      setHeader: (name, value) => void (seen.set[name] = value),
      removeHeader: (name) => void seen.removed.push(name),
      removeQueryArg: () => undefined,
      setBody: () => undefined,
    },
    route: null,
    service: null,
    consumer: who.consumer,
    credential: who.credential === undefined ? (who.consumer ? credentialOf(who.consumer) : null) : who.credential,
    anonymous: who.anonymous ?? false,
    index,
    runtime: {},
  };
  const response = aclAccess(ctx, aclConfigSchema.parse(config));
  return { response: response ?? null, seen };
}

const UNAUTHORIZED: PluginResponse = { status: 401, body: { message: 'Unauthorized' } };
const FORBIDDEN: PluginResponse = { status: 403, body: { message: 'You cannot consume this service' } };

describe('acl config and entity', () => {
  it("has Kong's defaults", () => {
    expect(aclConfigSchema.parse({ allow: ['a'] })).toEqual({ allow: ['a'], deny: null, hide_groups_header: false, always_use_authenticated_groups: false });
  });

  it('needs exactly one of allow and deny', () => {
    const exactly = "exactly one of these fields must be non-empty: 'config.allow', 'config.deny'";
    const atLeast = "at least one of these fields must be non-empty: 'config.allow', 'config.deny'";
    expect(checkAclConfig(aclConfigSchema.parse({ allow: ['a'], deny: ['b'] }))).toEqual({ '@entity': [exactly] });
    expect(checkAclConfig(aclConfigSchema.parse({}))).toEqual({ '@entity': [exactly, atLeast] });
    expect(checkAclConfig(aclConfigSchema.parse({ allow: [], deny: [] }))).toEqual({ '@entity': [exactly, atLeast] });
    expect(checkAclConfig(aclConfigSchema.parse({ allow: ['a'], deny: [] }))).toBeNull();
    expect(checkAclConfig(aclConfigSchema.parse({ deny: ['b'] }))).toBeNull();
  });

  it('runs at priority 950, is not an authentication plugin and may be scoped to a consumer', () => {
    expect(acl).toMatchObject({ name: 'acl', priority: 950, auth: false, noConsumer: false });
    expect(acl.entities?.map((e) => [e.name, e.adminPath, e.consumerPath, e.compositeUniques])).toEqual([['acls', 'acls', 'acls', [['consumer', 'group']]]]);
  });

  it('requires a group for an ACL', () => {
    expect(aclSchema.safeParse({ consumer: { id: alice.id } }).success).toBe(false);
    expect(aclSchema.safeParse({ consumer: { id: alice.id }, group: 'admin' }).success).toBe(true);
  });

  it('indexes groups per consumer once, in snapshot order', () => {
    expect(index.byConsumer.get(alice.id)?.header).toBe('admin, staff');
    expect(index.byConsumer.has(nobody.id)).toBe(false);
  });
});

describe('acl allow list', () => {
  const config = { allow: ['admin', 'partners'] };

  it('lets a member through with its groups upstream', () => {
    const { response, seen } = check(config, { consumer: alice });
    expect(response).toBeNull();
    expect(seen.set).toEqual({ 'x-consumer-groups': 'admin, staff' });
    expect(check(config, { consumer: bob }).seen.set).toEqual({ 'x-consumer-groups': 'partners' });
  });

  it('hides the groups header when asked, the client copy included', () => {
    const { response, seen } = check({ ...config, hide_groups_header: true }, { consumer: alice });
    expect(response).toBeNull();
    expect(seen.set).toEqual({});
    expect(seen.removed).toEqual(['x-consumer-groups']);
  });

  it('refuses a consumer in no allowed group', () => {
    expect(check({ allow: ['partners'] }, { consumer: alice }).response).toEqual(FORBIDDEN);
  });

  it('refuses a consumer without groups: 403 with a credential, 401 without', () => {
    expect(check(config, { consumer: nobody }).response).toEqual(FORBIDDEN);
    expect(check(config, { consumer: nobody, credential: null }).response).toEqual(UNAUTHORIZED);
  });
});

describe('acl deny list', () => {
  const config = { deny: ['admin'] };

  it('refuses a member of a denied group', () => {
    expect(check(config, { consumer: alice }).response).toEqual(FORBIDDEN);
  });

  it('lets others through with their groups', () => {
    const { response, seen } = check(config, { consumer: bob });
    expect(response).toBeNull();
    expect(seen.set).toEqual({ 'x-consumer-groups': 'partners' });
  });

  it('lets a consumer without groups through, with an empty groups header as Kong sends it', () => {
    const { response, seen } = check(config, { consumer: nobody });
    expect(response).toBeNull();
    expect(seen.set).toEqual({ 'x-consumer-groups': '' });
  });

  it('lets a consumer without groups through with no groups header when hide_groups_header is set', () => {
    const { response, seen } = check({ ...config, hide_groups_header: true }, { consumer: nobody });
    expect(response).toBeNull();
    expect(seen.set).toEqual({});
    expect(seen.removed).toEqual(['x-consumer-groups']);
  });
});

describe('acl without an identified consumer', () => {
  it('answers 401 Unauthorized when nobody authenticated', () => {
    expect(check({ allow: ['admin'] }, { consumer: null }).response).toEqual(UNAUTHORIZED);
    expect(check({ deny: ['admin'] }, { consumer: null }).response).toEqual(UNAUTHORIZED);
  });

  it('answers 403 for a credential without consumer (ldap-auth)', () => {
    const ldapCredential: CredentialRef = { id: null, identifier: 'ldap-user', consumerId: null };
    expect(check({ allow: ['admin'] }, { consumer: null, credential: ldapCredential }).response).toEqual(FORBIDDEN);
  });
});

describe('acl with the anonymous consumer', () => {
  const asAnonymous = { consumer: anonymous, credential: null, anonymous: true };

  it("uses the anonymous consumer's groups", () => {
    const { response, seen } = check({ allow: ['public', 'admin'] }, asAnonymous);
    expect(response).toBeNull();
    expect(seen.set).toEqual({ 'x-consumer-groups': 'public' });
  });

  it('refuses the anonymous consumer outside the allowed groups, or in a denied one', () => {
    expect(check({ allow: ['admin'] }, asAnonymous).response).toEqual(FORBIDDEN);
    expect(check({ deny: ['public'] }, asAnonymous).response).toEqual(FORBIDDEN);
  });

  it('returns 200 with deny groups (an anonymous consumer without groups gets an empty x-consumer-groups)', () => {
    const { response, seen } = check({ deny: ['everyone'] }, { consumer: nobody, credential: null, anonymous: true });
    expect(response).toBeNull();
    expect(seen.set).toEqual({ 'x-consumer-groups': '' });
  });

  it('answers 401 for an anonymous consumer without groups and an allow list', () => {
    expect(check({ allow: ['admin'] }, { consumer: nobody, credential: null, anonymous: true }).response).toEqual(UNAUTHORIZED);
  });
});
