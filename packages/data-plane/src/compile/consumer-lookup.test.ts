import { describe, expect, it } from '@jest/globals';
import type { AppliedChange, Consumer } from '@gatehouse/core';
import { ConsumerLookup } from './consumer-lookup';

const consumer = (id: string, username: string | null): Consumer => ({ id, username, custom_id: null, tags: null, created_at: 1, updated_at: 1 });
const change = (id: string, before: Consumer | undefined, after: Consumer | undefined): AppliedChange<'consumers'> => ({ key: 'consumers', id, before, after });

describe('ConsumerLookup', () => {
  it('builds the username map only when asked, from the rows as they are then', () => {
    const alice = consumer('c1', 'alice');
    const rows = new Map<string, Consumer>([['c1', alice]]);
    const lookup = new ConsumerLookup(rows);
    // a delta before anyone asked: only the rows change
    const bob = consumer('c2', 'bob');
    rows.set('c2', bob);
    lookup.follow(change('c2', undefined, bob));
    expect(lookup.usernamesBuilt).toBe(false);
    expect(lookup.byUsername.get('bob')).toBe(bob);
    expect(lookup.usernamesBuilt).toBe(true);
    expect([...lookup.byUsername.keys()].sort()).toEqual(['alice', 'bob']);
  });

  it('once built, follows renames, arrivals and departures', () => {
    const alice = consumer('c1', 'alice');
    const carol = consumer('c3', 'carol');
    const rows = new Map<string, Consumer>([
      ['c1', alice],
      ['c3', carol],
    ]);
    const lookup = new ConsumerLookup(rows);
    expect(lookup.byUsername.size).toBe(2);

    const renamed = consumer('c1', 'alicia');
    lookup.follow(change('c1', alice, renamed));
    const dave = consumer('c4', 'dave');
    lookup.follow(change('c4', undefined, dave));
    lookup.follow(change('c3', carol, undefined));
    expect([...lookup.byUsername.entries()].map(([name, c]) => [name, c.id]).sort()).toEqual([
      ['alicia', 'c1'],
      ['dave', 'c4'],
    ]);

    // a username taken over by another consumer in the same delta stays with the one that holds it now
    const erin = consumer('c5', 'dave');
    lookup.follow(change('c5', undefined, erin));
    lookup.follow(change('c4', dave, consumer('c4', 'david')));
    expect(lookup.byUsername.get('dave')?.id).toBe('c5');
    expect(lookup.byUsername.get('david')?.id).toBe('c4');
  });
});
