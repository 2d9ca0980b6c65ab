import { describe, expect, it } from '@jest/globals';
import { bundledPlugins } from '@gatehouse/plugins';
import { MemoryBus, verifySnapshot, deriveSnapshotKeys } from '@gatehouse/sync';
import { offlineDocumentKinds } from '../declarative/offline-kinds';
import { DeclarativeSource } from './declarative-source';
import { MemoryDocumentStore, signDocument } from './document-store';

const SECRET = 'a-cluster-secret-of-at-least-32-bytes!!';
const kinds = offlineDocumentKinds(bundledPlugins);
const doc = (username: string) => ({ _format_version: '3.0', consumers: [{ username }] });
const usernames = (source: DeclarativeSource) => (source.state.entities.get('consumers') ?? []).map((c) => c.username);

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('DB-less control planes: the document kept beside the snapshot', () => {
  const make = (bus: MemoryBus, documents: MemoryDocumentStore) => new DeclarativeSource({ kinds, plugins: bundledPlugins, bus, secret: SECRET, check: () => {}, documents });

  it('a restarted control plane resumes the last applied document at its position; the bus holds its signed snapshot', async () => {
    const bus = new MemoryBus();
    const documents = new MemoryDocumentStore();
    const first = make(bus, documents);
    await first.replace(doc('one'));
    const applied = await first.replace(doc('two'));
    const restarted = make(bus, documents);
    expect(await restarted.resume()).toBe(true);
    expect(usernames(restarted)).toEqual(['two']);
    // published again right after what the bus holds, in the same epoch
    expect(restarted.status()).toMatchObject({ version: applied.version + 1, epoch: first.status().epoch });
    const latest = await bus.fetchLatest();
    expect(verifySnapshot(latest!, deriveSnapshotKeys(SECRET)).version).toBe(applied.version + 1);
  });

  it('control planes sharing the store follow the newest publication of any of them', async () => {
    const bus = new MemoryBus();
    const documents = new MemoryDocumentStore();
    const a = make(bus, documents);
    const b = make(bus, documents);
    await a.publishCurrent();
    await b.follow();
    await a.replace(doc('from-a'));
    await until(() => usernames(b).join() === 'from-a');
    const fromB = await b.replace(doc('from-b'));
    expect(fromB.version).toBeGreaterThan(a.status().version!);
    expect(b.status().epoch).toBe(a.status().epoch);
    await b.close();
  });

  it('a document not signed with the cluster secret is not resumed', async () => {
    const documents = new MemoryDocumentStore();
    await documents.save(signDocument('another-secret-another-secret-another', '1700000000000-0123456789abcdef', 3, JSON.stringify(doc('forged'))));
    const source = make(new MemoryBus(), documents);
    expect(await source.resume()).toBe(false);
    expect(usernames(source)).toEqual([]);
  });
});
