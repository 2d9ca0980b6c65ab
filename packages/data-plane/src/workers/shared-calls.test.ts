import { describe, expect, it } from '@jest/globals';
import { LocalCounters, MemoryCacheStore, MemoryTokenStore, oauth2TokenDigest } from '@gatehouse/plugins';
import type { CallBatch, ReplyBatch } from './messages';
import { SharedCallClient, SharedCallServer } from './shared-calls';
import { remoteNodeStores, serveNodeStores } from './shared-stores';

/** A worker and its primary joined directly; every message goes through JSON and replies arrive on a later turn, as over IPC. */
const wire = <T>(message: T): T => JSON.parse(JSON.stringify(message)) as T;

function linked() {
  const server = new SharedCallServer();
  const batches: CallBatch[] = [];
  const replies: ReplyBatch[] = [];
  const client: SharedCallClient = new SharedCallClient((batch) => {
    batches.push(wire(batch));
    server.handle(wire(batch), (reply) => {
      replies.push(reply);
      setImmediate(() => client.receive(wire(reply)));
    });
  });
  return { server, client, batches, replies };
}

const minute = (start: number) => [{ period: 'minute' as const, limit: 3, window: { start, end: start + 60_000 } }];

describe('shared calls between proxy workers and their primary', () => {
  it('the calls of one turn leave as one message and come back as one', async () => {
    const { server, client, batches, replies } = linked();
    serveNodeStores(server, { counters: new LocalCounters(), cache: new MemoryCacheStore(1 << 20), tokens: null });
    const counters = remoteNodeStores(client, false).rateLimitCounters;
    const tallies = await Promise.all(Array.from({ length: 5 }, () => counters.take('plugin:consumer', minute(0))));
    expect(batches).toHaveLength(1);
    expect(batches[0]!.calls).toHaveLength(5);
    expect(replies).toHaveLength(1);
    // one set of counters for the node: exactly the limit passes
    expect(tallies.map((t) => t.blocked)).toEqual([false, false, false, true, true]);
    expect(tallies.map((t) => t.counts[0])).toEqual([1, 2, 3, 3, 3]);
  });

  it("response-ratelimiting's usage is read and added in the node's one set of counters", async () => {
    const { server, client } = linked();
    const node = new LocalCounters();
    serveNodeStores(server, { counters: node, cache: new MemoryCacheStore(1 << 20), tokens: null });
    const counters = remoteNodeStores(client, false).rateLimitCounters;
    await counters.add!('plugin:ip:video', minute(0), 2);
    await counters.add!('plugin:ip:video', minute(0), 1.5);
    expect(await counters.peek!('plugin:ip:video', minute(0))).toEqual([3.5]);
    expect(node.peek('plugin:ip:video', minute(0))).toEqual([3.5]);
  });

  it('the memory proxy-cache keeps bodies as bytes across the channel', async () => {
    const { server, client } = linked();
    const cache = new MemoryCacheStore(1 << 20);
    serveNodeStores(server, { counters: new LocalCounters(), cache, tokens: null });
    const remote = remoteNodeStores(client, false).proxyCacheMemory;
    await remote.set('k', { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"a":1}'), at: 1, ttl: 60 }, 60);
    expect(Buffer.isBuffer(cache.get('k')!.body)).toBe(true);
    const back = await remote.get('k');
    expect(Buffer.isBuffer(back!.body)).toBe(true);
    expect(back!.body.toString()).toBe('{"a":1}');
    expect(await remote.delete('k')).toBe(true);
    expect(await remote.get('k')).toBeNull();
  });

  it('oauth2 tokens of the embedded store are reached when the node has them', async () => {
    const { server, client } = linked();
    const tokens = new MemoryTokenStore();
    serveNodeStores(server, { counters: new LocalCounters(), cache: new MemoryCacheStore(1024), tokens });
    const remote = remoteNodeStores(client, true).oauth2Tokens!;
    const token = {
      id: '00000000-0000-4000-8000-000000000001',
      created_at: 1,
      credential: { id: 'c' },
      service: null,
      token_type: 'bearer' as const,
      expires_in: 0,
      access_token_digest: oauth2TokenDigest('at'),
      refresh_token_digest: null,
      authenticated_userid: null,
      scope: null,
      issued_at_ms: Date.now(),
      refresh_expires_at_ms: null,
      removed_at_ms: null,
    };
    await remote.saveToken(token);
    expect((await tokens.findByAccessDigest(oauth2TokenDigest('at')))?.id).toBe(token.id);
    expect((await remote.findByAccessDigest(oauth2TokenDigest('at')))?.id).toBe(token.id);
    expect(await remote.revoke(token.id)).toBe(true);
    expect(await remote.revoke(token.id)).toBe(false);
  });

  it('an unknown call is refused, and calls after the primary is gone fail at once', async () => {
    const { client } = linked();
    await expect(client.call('nothing', 'take', [])).rejects.toThrow('no shared nothing.take');
    client.close('the primary is gone');
    await expect(client.call('rate-limit', 'take', [])).rejects.toThrow('the primary is gone');
  });
});
