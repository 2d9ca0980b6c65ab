import { KeyObject } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { AppliedChange, ConfigRow } from '@gatehouse/core';
import { BROKEN_UPDATES, firstDivergence, RandomCredentialDeltas, sortedEntries, type CredentialKind, type IndexUnderTest } from '../../test/support/random-credential-deltas';
import { bundledPlugins } from '../bundled';

const HASH_CHARS = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const JWT_ALGORITHMS = ['HS256', 'HS384', 'RS256', 'not-an-algorithm'];

/** A string of the stored-hash form with the given cost (the index reads the cost, never checks a password). */
function fakeHash(cost: number, random: () => number): string {
  const body = Array.from({ length: 53 }, () => HASH_CHARS[Math.floor(random() * HASH_CHARS.length)]).join('');
  return `$2b$${String(cost).padStart(2, '0')}$${body}`;
}

/** The other fields of a random row, per credential entity: every declared index needs one. */
const ROW_FIELDS: Record<string, CredentialKind['fields']> = {
  keyauth_credentials: (random) => ({ ttl: random() < 0.3 ? 60 : null, expires_at: random() < 0.2 ? 1000 : undefined }),
  basicauth_credentials: (random) => ({ password: fakeHash(4 + Math.floor(random() * 3), random) }),
  hmacauth_credentials: (random, n) => ({ secret: random() < 0.9 ? `secret-${n}` : null }),
  jwt_secrets: (random, n) => ({ algorithm: JWT_ALGORITHMS[Math.floor(random() * JWT_ALGORITHMS.length)], secret: random() < 0.8 ? `secret-${n}` : null, rsa_public_key: null }),
  oauth2_credentials: (random, n) => ({
    name: `app-${n}`,
    client_secret: `secret-${n}`,
    hash_secret: false,
    client_type: random() < 0.5 ? 'public' : 'confidential',
    redirect_uris: random() < 0.7 ? [`https://app-${n}.test/cb`] : null,
  }),
  acls: (random) => ({ group: `g${Math.floor(random() * 4)}` }),
};

/** An index as plain data: maps sorted by key, functions left out, an entry's reference to itself cut. */
function plain(value: unknown, seen: readonly object[] = []): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? '[function]' : value;
  if (seen.includes(value)) return '[itself]';
  const inner = [...seen, value];
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (value instanceof KeyObject) return value.export({ format: 'jwk' });
  if (value instanceof Map) return sortedEntries(value, (v) => plain(v, inner));
  if (value instanceof Set || Array.isArray(value)) return [...value].map((v) => plain(v, inner));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v, inner)]));
}

const declared = bundledPlugins.flatMap((plugin) => (plugin.credentialIndex ? [{ plugin, index: plugin.credentialIndex }] : []));

const cases = declared.map(({ plugin, index }) => {
  const keyField = Object.values(index.keyedBy)[0];
  const kind: CredentialKind = { entity: index.entity.name, nameField: keyField && keyField !== 'id' ? keyField : null, fields: ROW_FIELDS[index.entity.name]! };
  const underTest: IndexUnderTest<unknown> = { compile: index.compile, update: index.updateIndex, sections: index.indexSections, normalise: (built) => plain(built) };
  return [plugin.name, kind, underTest] as const;
});

describe('declared credential indexes followed by deltas', () => {
  it('covers every credential entity of the bundled plugins that declares an index, each with its random rows', () => {
    expect(declared.map(({ index }) => index.entity.name).sort()).toEqual(Object.keys(ROW_FIELDS).sort());
    for (const { plugin, index } of declared) expect(plugin.entities).toContain(index.entity);
  });

  it.each(cases)('%s: equals the index compiled from the resulting config after every random delta', (_name, kind, underTest) => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { divergence, largest } = firstDivergence(kind, underTest, seed, 250);
      expect(divergence).toBeNull();
      expect(largest).toBeGreaterThan(5);
    }
  });

  it.each([
    ['basic-auth', 'counts'],
    ['acl', 'entriesByConsumer'],
    ['acl', 'byConsumer'],
  ])('%s: random deltas fill its declared %s, which the comparison covers', (name, field) => {
    const [, kind, underTest] = cases.find(([plugin]) => plugin === name)!;
    const deltas = new RandomCredentialDeltas(kind, 1);
    for (let i = 0; i < 50; i++) deltas.step();
    const built = underTest.compile(deltas.config()) as Record<string, Map<unknown, unknown>>;
    expect(built[field]!.size).toBeGreaterThan(0);
    expect((plain(built) as Record<string, unknown[]>)[field]).toHaveLength(built[field]!.size);
  });

  const broken = cases.flatMap(([name, kind, underTest]) => (Object.keys(BROKEN_UPDATES) as Array<keyof typeof BROKEN_UPDATES>).map((how) => [name, how, kind, underTest] as const));
  it.each(broken)('%s: the comparison catches an update that %s', (_name, how, kind, underTest) => {
    const update = (index: unknown, changes: readonly AppliedChange[], rows: (s: string, id: string) => ConfigRow | undefined) => underTest.update(index, BROKEN_UPDATES[how](changes), rows);
    expect([1, 2, 3, 4, 5].some((seed) => firstDivergence(kind, { ...underTest, update }, seed, 250).divergence !== null)).toBe(true);
  });
});
