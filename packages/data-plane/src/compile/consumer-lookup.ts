import type { AppliedChange, Consumer } from '@gatehouse/core';
import type { ConsumerDirectory } from './types';

/**
 * The consumer directory of a configuration. `byId` is the configuration's own map of consumer rows (kept current by
 * deltas). `byUsername` is needed only where an `anonymous` setting names a consumer by username, so it is built the
 * first time it is asked for (at 100,000 consumers a map of them all costs about 4 MB) and followed by deltas from then on.
 */
export class ConsumerLookup implements ConsumerDirectory {
  private usernames: Map<string, Consumer> | null = null;

  constructor(readonly byId: ReadonlyMap<string, Consumer>) {}

  get byUsername(): ReadonlyMap<string, Consumer> {
    if (this.usernames === null) {
      const usernames = new Map<string, Consumer>();
      for (const consumer of this.byId.values()) if (consumer.username != null) usernames.set(consumer.username, consumer);
      this.usernames = usernames;
    }
    return this.usernames;
  }

  /** whether `byUsername` was built (it is then kept current) */
  get usernamesBuilt(): boolean {
    return this.usernames !== null;
  }

  /** a consumer change of a delta (byId, the rows' own map, is current already): renames, arrivals and departures */
  follow(change: AppliedChange<'consumers'>): void {
    const usernames = this.usernames;
    if (usernames === null) return;
    const { before, after } = change;
    if (before?.username != null && usernames.get(before.username)?.id === change.id) usernames.delete(before.username);
    if (after?.username != null) usernames.set(after.username, after);
  }
}
