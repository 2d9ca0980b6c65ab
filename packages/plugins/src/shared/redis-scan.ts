import { Cluster } from 'ioredis';
import type { RedisClient } from '../contract';

/**
 * Deletes the keys matching `pattern` that `keep` does not keep, a batch at a time; returns how many. In a Redis
 * Cluster SCAN sees one node only, so every master is scanned (keys of one prefix share a hash slot, see
 * `keyPrefixFor`, so one DEL takes a batch).
 */
export async function deleteMatching(redis: RedisClient, pattern: string, keep: (key: string) => boolean = () => false): Promise<number> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  let removed = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      const doomed = keys.filter((key) => !keep(key));
      if (doomed.length > 0) removed += await node.del(...doomed);
    } while (cursor !== '0');
  }
  return removed;
}
